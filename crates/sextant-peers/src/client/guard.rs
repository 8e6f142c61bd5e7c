//! The network guard: every outbound connection (calls and card fetches) goes through it.
//!
//! Rules, checked **before any packet is sent to the target**:
//!
//! - The URL: `https`, or plain `http` only to loopback; no credentials in the URL; a host.
//! - A literal IP host (`https://10.0.0.1/`, `http://[::ffff:127.0.0.1]/`, and the decimal,
//!   octal and hex IPv4 forms the `url` crate normalises to dotted quads) is checked at once:
//!   reqwest never asks the resolver about literals.
//! - A name is refused outright if it is a cloud metadata name (`metadata.google.internal`, …);
//!   otherwise it is resolved **once** by [`GuardedResolver`], **every** resolved address is
//!   checked (one bad address refuses the name: no mixed answers), and the connection goes to
//!   exactly those checked addresses (reqwest does no second lookup), which defeats DNS
//!   rebinding.
//! - Addresses: link-local (169.254.0.0/16, fe80::/10), cloud metadata (169.254.169.254,
//!   169.254.170.2, 100.100.100.200, 168.63.129.16, fd00:ec2::254), unspecified, multicast,
//!   broadcast, reserved and documentation ranges are always refused; loopback is allowed
//!   unless the `allow_loopback` setting is off; private ranges (10/8, 172.16/12, 192.168/16,
//!   100.64/10, fc00::/7, …) only for a peer registered with `allow_private_network`. IPv6
//!   forms that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64
//!   `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the embedded IPv4 address.
//!
//! Every refusal says why ([`Refusal`]).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// What one connection may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetPolicy {
    /// Private-network addresses (a peer registered with `allow_private_network`).
    pub allow_private: bool,
    /// Loopback addresses (the `allow_loopback` setting; on by default).
    pub allow_loopback: bool,
    /// Only loopback addresses: set for plain `http` URLs.
    pub loopback_only: bool,
}

impl NetPolicy {
    /// Public addresses, plus loopback when `allow_loopback`.
    pub fn public(allow_loopback: bool) -> Self {
        Self {
            allow_private: false,
            allow_loopback,
            loopback_only: false,
        }
    }
}

/// A refused connection: what was refused and why, in plain words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused to connect to {target}: {reason}")]
pub struct Refusal {
    /// The URL, host or `host (address)` that was refused.
    pub target: String,
    pub reason: String,
}

impl Refusal {
    fn new(target: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            target: target.into(),
            reason: reason.into(),
        }
    }
}

/// Host names of cloud metadata services, refused before any lookup.
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
    "metadata.tencentyun.com",
    "metadata.platformequinix.com",
];

/// Cloud metadata addresses outside the link-local ranges (those are refused anyway).
const METADATA_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(100, 100, 100, 200), // Alibaba Cloud
    Ipv4Addr::new(168, 63, 129, 16),   // Azure wire server
    Ipv4Addr::new(192, 0, 0, 192),     // Oracle Cloud (legacy)
];
const METADATA_V6: &[Ipv6Addr] = &[
    Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254), // AWS IMDS over IPv6
    Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23),  // AWS DNS over IPv6
];

/// Why an address is never reachable, whatever the policy.
fn always_refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if METADATA_V4.contains(&ip) || ip == Ipv4Addr::new(169, 254, 169, 254) {
        return Some("a cloud metadata address is never reachable");
    }
    if o[0] == 169 && o[1] == 254 {
        return Some("link-local addresses (169.254.0.0/16) are never reachable");
    }
    if o[0] == 0 {
        return Some("0.0.0.0/8 (\"this network\") is never reachable");
    }
    if ip.is_broadcast() {
        return Some("the broadcast address is never reachable");
    }
    if ip.is_multicast() {
        return Some("multicast addresses are never reachable");
    }
    if o[0] >= 240 {
        return Some("reserved addresses (240.0.0.0/4) are never reachable");
    }
    if (o[0], o[1], o[2]) == (192, 0, 2)
        || (o[0], o[1], o[2]) == (198, 51, 100)
        || (o[0], o[1], o[2]) == (203, 0, 113)
    {
        return Some("documentation addresses are never reachable");
    }
    None
}

/// Why a private address needs `allow_private_network`, if it is one.
fn private_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_private() {
        return Some("a private-network address (10/8, 172.16/12, 192.168/16)");
    }
    if o[0] == 100 && (64..128).contains(&o[1]) {
        return Some("a shared (carrier-grade NAT) address (100.64.0.0/10)");
    }
    if (o[0], o[1], o[2]) == (192, 0, 0) {
        return Some("an IETF protocol address (192.0.0.0/24)");
    }
    if o[0] == 198 && (o[1] == 18 || o[1] == 19) {
        return Some("a benchmarking address (198.18.0.0/15)");
    }
    None
}

/// The IPv4 address an IPv6 address stands for, if it embeds one: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated), NAT64 (`64:ff9b::/96`,
/// `64:ff9b:1::/48`) and 6to4 (`2002:aabb:ccdd::/48`).
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let tail = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    if s[..6] == [0, 0, 0, 0, 0, 0] && !(s[6] == 0 && s[7] <= 1) {
        // IPv4-compatible; `::` and `::1` are not IPv4 addresses.
        return Some(tail);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            (s[1] & 0xff) as u8,
            (s[2] >> 8) as u8,
            (s[2] & 0xff) as u8,
        ));
    }
    None
}

/// Checks one address against a policy; the error is the reason.
pub fn check_ip(ip: IpAddr, policy: &NetPolicy) -> Result<(), String> {
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => embedded_v4(v6),
    };
    if let (IpAddr::V6(v6), Some(inner)) = (ip, v4) {
        // Judge the IPv4 address it stands for, and say so.
        return check_ip(IpAddr::V4(inner), policy)
            .map_err(|why| format!("{v6} embeds {inner}: {why}"));
    }
    let loopback = ip.is_loopback();
    let always = match ip {
        IpAddr::V4(v4) => always_refused_v4(v4),
        IpAddr::V6(v6) => always_refused_v6(v6),
    };
    if let Some(why) = always {
        return Err(why.to_string());
    }
    if loopback {
        return if policy.allow_loopback {
            Ok(())
        } else {
            Err("loopback addresses are turned off by the allow_loopback setting".into())
        };
    }
    if policy.loopback_only {
        return Err("plain http is allowed only to loopback addresses; use https".into());
    }
    let private = match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => private_v6(v6),
    };
    if let Some(what) = private {
        return if policy.allow_private {
            Ok(())
        } else {
            Err(format!(
                "{what} is reachable only for a peer registered with allow_private_network"
            ))
        };
    }
    Ok(())
}

fn always_refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if METADATA_V6.contains(&ip) {
        return Some("a cloud metadata address is never reachable");
    }
    if ip.is_unspecified() {
        return Some("the unspecified address (::) is never reachable");
    }
    if s[0] & 0xffc0 == 0xfe80 {
        return Some("link-local addresses (fe80::/10) are never reachable");
    }
    if ip.is_multicast() {
        return Some("multicast addresses are never reachable");
    }
    if s[0] == 0x2001 && s[1] == 0x0db8 {
        return Some("documentation addresses (2001:db8::/32) are never reachable");
    }
    if s[0] == 0x0100 && s[1..4] == [0, 0, 0] {
        return Some("discard-only addresses (100::/64) are never reachable");
    }
    if s[0] == 0x2001 && s[1] == 0 {
        return Some("Teredo addresses (2001::/32) are never reachable");
    }
    None
}

fn private_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if s[0] & 0xfe00 == 0xfc00 {
        return Some("a unique-local address (fc00::/7)");
    }
    if s[0] & 0xffc0 == 0xfec0 {
        return Some("a site-local address (fec0::/10)");
    }
    None
}

/// Whether a host name is a cloud metadata name.
fn metadata_name(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    METADATA_NAMES.contains(&h.as_str())
}

/// Whether a host name is `localhost` or a name under it (`localhost.`, `api.localhost`, any
/// case): names that always mean loopback (RFC 6761 §6.3).
pub fn localhost_name(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost" || h.ends_with(".localhost")
}

/// Checks a URL before anything is sent: scheme, credentials, literal addresses, metadata
/// names, and `localhost` names (judged as the loopback address they always are). Returns the policy the connection must use (`loopback_only` for plain http).
pub fn check_url(url: &Url, policy: NetPolicy) -> Result<NetPolicy, Refusal> {
    let shown = redacted(url);
    let mut policy = policy;
    match url.scheme() {
        "https" => {}
        "http" => policy.loopback_only = true,
        other => {
            return Err(Refusal::new(
                shown,
                format!("only https (and plain http to loopback) is allowed, not {other}:"),
            ));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::new(
            shown,
            "credentials in the URL are not allowed; register the peer with a token instead",
        ));
    }
    match url.host() {
        None => Err(Refusal::new(shown, "the URL has no host")),
        Some(Host::Ipv4(ip)) => check_ip(IpAddr::V4(ip), &policy)
            .map(|()| policy)
            .map_err(|why| Refusal::new(shown, why)),
        Some(Host::Ipv6(ip)) => check_ip(IpAddr::V6(ip), &policy)
            .map(|()| policy)
            .map_err(|why| Refusal::new(shown, why)),
        Some(Host::Domain(name)) => {
            if metadata_name(name) {
                Err(Refusal::new(
                    shown,
                    format!("{name} is a cloud metadata host and is never reachable"),
                ))
            } else if localhost_name(name) {
                // Always loopback (RFC 6761): judged as loopback now, not only once resolved.
                check_ip(IpAddr::V4(Ipv4Addr::LOCALHOST), &policy)
                    .map(|()| policy)
                    .map_err(|why| Refusal::new(shown, format!("{name} is a loopback name: {why}")))
            } else {
                Ok(policy)
            }
        }
    }
}

/// The URL as shown in messages: without credentials, query or fragment.
pub fn redacted(url: &Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// Name resolution behind the guard: the system resolver, or a fixed table in tests.
pub trait Lookup: Send + Sync + 'static {
    /// Every address of `host`.
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let host = host.to_string();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A fixed name → addresses table, for tests: nothing is looked up on the network.
#[derive(Debug, Default, Clone)]
pub struct StaticLookup {
    names: HashMap<String, Vec<IpAddr>>,
}

impl StaticLookup {
    /// Adds (or replaces) a name.
    pub fn with(mut self, name: &str, addrs: &[IpAddr]) -> Self {
        self.names.insert(name.to_ascii_lowercase(), addrs.to_vec());
        self
    }
}

impl Lookup for StaticLookup {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let found = self.names.get(&host.to_ascii_lowercase()).cloned();
        let host = host.to_string();
        Box::pin(async move {
            found.ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{host}: no such host (test resolver)"),
                )
            })
        })
    }
}

/// The reqwest resolver: resolve once, check every address, hand back exactly those.
pub struct GuardedResolver {
    policy: NetPolicy,
    lookup: Arc<dyn Lookup>,
}

impl GuardedResolver {
    pub fn new(policy: NetPolicy, lookup: Arc<dyn Lookup>) -> Self {
        Self { policy, lookup }
    }

    /// Resolves and checks `host`; the addresses to connect to.
    pub async fn resolve_checked(
        policy: NetPolicy,
        lookup: &dyn Lookup,
        host: &str,
    ) -> Result<Vec<IpAddr>, ResolveError> {
        if metadata_name(host) {
            return Err(ResolveError::Refused(Refusal::new(
                host,
                format!("{host} is a cloud metadata host and is never reachable"),
            )));
        }
        let addrs = lookup
            .lookup(host)
            .await
            .map_err(|e| ResolveError::Lookup(format!("cannot resolve {host}: {e}")))?;
        if addrs.is_empty() {
            return Err(ResolveError::Lookup(format!("{host} has no addresses")));
        }
        for ip in &addrs {
            if let Err(why) = check_ip(*ip, &policy) {
                return Err(ResolveError::Refused(Refusal::new(
                    format!("{host} ({ip})"),
                    why,
                )));
            }
        }
        Ok(addrs)
    }
}

/// Why a name did not resolve to connectable addresses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Refused(Refusal),
    #[error("{0}")]
    Lookup(String),
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy;
        let lookup = self.lookup.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = Self::resolve_checked(policy, lookup.as_ref(), &host)
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            // The port is ignored by reqwest: the URL's port is used.
            let addrs: Addrs = Box::new(
                addrs
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    const DEFAULT: NetPolicy = NetPolicy {
        allow_private: false,
        allow_loopback: true,
        loopback_only: false,
    };

    #[test]
    fn addresses_are_judged_with_reasons() {
        let private = NetPolicy {
            allow_private: true,
            ..DEFAULT
        };
        let no_loopback = NetPolicy {
            allow_loopback: false,
            ..DEFAULT
        };
        // (address, default policy ok?, private allowed ok?, reason fragment)
        let table: &[(&str, bool, bool, &str)] = &[
            ("8.8.8.8", true, true, ""),
            ("2606:4700::1111", true, true, ""),
            ("127.0.0.1", true, true, ""),
            ("127.8.9.10", true, true, ""),
            ("::1", true, true, ""),
            ("169.254.169.254", false, false, "metadata"),
            ("169.254.170.2", false, false, "link-local"),
            ("169.254.1.1", false, false, "link-local"),
            ("100.100.100.200", false, false, "metadata"),
            ("168.63.129.16", false, false, "metadata"),
            ("fd00:ec2::254", false, false, "metadata"),
            ("fe80::1", false, false, "link-local"),
            ("febf::1", false, false, "link-local"),
            (
                "::ffff:169.254.169.254",
                false,
                false,
                "embeds 169.254.169.254",
            ),
            ("::ffff:127.0.0.1", true, true, ""),
            ("::ffff:10.0.0.1", false, true, "private"),
            ("64:ff9b::a9fe:a9fe", false, false, "metadata"),
            ("2002:a9fe:a9fe::1", false, false, "metadata"),
            ("::169.254.169.254", false, false, "metadata"),
            ("0.0.0.0", false, false, "this network"),
            ("::", false, false, "unspecified"),
            ("255.255.255.255", false, false, "broadcast"),
            ("224.0.0.1", false, false, "multicast"),
            ("ff02::1", false, false, "multicast"),
            ("240.0.0.1", false, false, "reserved"),
            ("192.0.2.1", false, false, "documentation"),
            ("2001:db8::1", false, false, "documentation"),
            ("10.0.0.5", false, true, "allow_private_network"),
            ("172.16.0.1", false, true, "private-network"),
            ("172.31.255.255", false, true, "private-network"),
            ("192.168.1.1", false, true, "private-network"),
            ("100.64.0.1", false, true, "carrier-grade"),
            ("198.18.0.1", false, true, "benchmarking"),
            ("fc00::1", false, true, "unique-local"),
            ("fd12:3456::1", false, true, "unique-local"),
            ("fec0::1", false, true, "site-local"),
        ];
        for (addr, ok_default, ok_private, why) in table {
            let got = check_ip(ip(addr), &DEFAULT);
            assert_eq!(got.is_ok(), *ok_default, "{addr}: {got:?}");
            if let Err(reason) = got {
                assert!(reason.contains(why), "{addr}: {reason:?} lacks {why:?}");
            }
            assert_eq!(
                check_ip(ip(addr), &private).is_ok(),
                *ok_private,
                "{addr} with allow_private"
            );
        }
        let off = check_ip(ip("127.0.0.1"), &no_loopback).unwrap_err();
        assert!(off.contains("allow_loopback"), "{off}");
        assert!(check_ip(ip("::ffff:127.0.0.1"), &no_loopback).is_err());
        let http = NetPolicy {
            loopback_only: true,
            allow_private: true,
            ..DEFAULT
        };
        assert!(check_ip(ip("127.0.0.1"), &http).is_ok());
        let e = check_ip(ip("10.0.0.1"), &http).unwrap_err();
        assert!(e.contains("plain http"), "{e}");
    }

    fn url(s: &str) -> Url {
        Url::parse(s).expect("a URL")
    }

    #[test]
    fn urls_are_checked_before_any_lookup() {
        let refused: &[(&str, &str)] = &[
            ("https://169.254.169.254/latest/meta-data", "metadata"),
            // Decimal, octal and hex forms of 169.254.169.254 and 127.0.0.1.
            ("https://2852039166/", "metadata"),
            ("https://0251.0376.0251.0376/", "metadata"),
            ("https://0xa9fea9fe/", "metadata"),
            ("https://[::ffff:a9fe:a9fe]/", "metadata"),
            ("https://[fd00:ec2::254]/", "metadata"),
            ("https://[fe80::1]/", "link-local"),
            (
                "http://metadata.google.internal/computeMetadata/v1/",
                "metadata",
            ),
            ("https://METADATA.GOOGLE.INTERNAL./", "metadata"),
            ("https://10.1.2.3/", "allow_private_network"),
            ("https://0x0a000001/", "allow_private_network"),
            ("http://10.1.2.3/", "plain http"),
            ("http://8.8.8.8/", "plain http"),
            ("ftp://example.com/", "only https"),
            ("file:///etc/passwd", "only https"),
            ("https://user:pw@example.com/", "credentials"),
            ("https://0.0.0.0:8080/", "this network"),
        ];
        for (u, why) in refused {
            let err = check_url(&url(u), DEFAULT).unwrap_err();
            assert!(err.reason.contains(why), "{u}: {err}");
            assert!(
                !err.target.contains("pw"),
                "credentials are never shown: {err}"
            );
        }
        assert!(
            check_url(&url("http://127.0.0.1:9/"), DEFAULT)
                .expect("loopback http")
                .loopback_only
        );
        assert!(check_url(&url("http://2130706433/"), DEFAULT).is_ok());
        assert!(check_url(&url("http://[::1]:80/"), DEFAULT).is_ok());
        let https = check_url(&url("https://agent.example.com/a2a"), DEFAULT).expect("https");
        assert!(!https.loopback_only);
        let no_loop = NetPolicy::public(false);
        assert!(check_url(&url("http://127.0.0.1/"), no_loop).is_err());
        // localhost names are loopback before any lookup: refused where loopback is off,
        // allowed (for plain http too) where it is on.
        for u in [
            "https://localhost/hook",
            "https://LocalHost:8443/hook",
            "https://localhost./hook",
            "https://api.localhost/hook",
            "https://a.b.LOCALHOST./hook",
            "http://localhost:9/hook",
        ] {
            let err = check_url(&url(u), no_loop).unwrap_err();
            assert!(
                err.reason.contains("loopback name") && err.reason.contains("allow_loopback"),
                "{u}: {err}"
            );
            assert!(check_url(&url(u), DEFAULT).is_ok(), "{u}");
        }
        assert!(check_url(&url("https://notlocalhost.example/"), no_loop).is_ok());
        assert!(check_url(&url("https://localhost.example/"), no_loop).is_ok());
    }

    #[tokio::test]
    async fn every_resolved_address_is_checked() {
        let lookup = StaticLookup::default()
            .with("good.test", &[ip("127.0.0.1")])
            .with("mixed.test", &[ip("127.0.0.1"), ip("169.254.169.254")])
            .with("private.test", &[ip("10.0.0.7")])
            .with("empty.test", &[]);
        let ok = GuardedResolver::resolve_checked(DEFAULT, &lookup, "good.test").await;
        assert_eq!(ok, Ok(vec![ip("127.0.0.1")]));
        let mixed = GuardedResolver::resolve_checked(DEFAULT, &lookup, "mixed.test").await;
        assert!(
            matches!(&mixed, Err(ResolveError::Refused(r)) if r.target.contains("169.254.169.254")),
            "{mixed:?}"
        );
        let private = GuardedResolver::resolve_checked(DEFAULT, &lookup, "private.test").await;
        assert!(matches!(private, Err(ResolveError::Refused(_))));
        let allowed = NetPolicy {
            allow_private: true,
            ..DEFAULT
        };
        // Judged only: nothing is dialled here.
        assert!(
            GuardedResolver::resolve_checked(allowed, &lookup, "private.test")
                .await
                .is_ok()
        );
        assert!(matches!(
            GuardedResolver::resolve_checked(DEFAULT, &lookup, "empty.test").await,
            Err(ResolveError::Lookup(_))
        ));
        assert!(matches!(
            GuardedResolver::resolve_checked(DEFAULT, &lookup, "metadata.google.internal").await,
            Err(ResolveError::Refused(_))
        ));
    }
}
