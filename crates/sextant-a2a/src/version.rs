//! The `A2A-Version` service parameter.
//!
//! Policy: the minor versions Sextant implements are served — `1.0`, with any patch
//! (`1.0.3`) — and every other explicit version is refused with -32009: `1.1` and `1.7.2` are
//! versions this server does not speak, only ASCII digits count (a fullwidth `１.0` is not
//! `1.0`), and only canonical numbers (no leading zero: `01.0` and `1.00` are not `1.0`). A
//! request with two `A2A-Version` headers names no one version and is refused the same way
//! (the server joins them, `1.0, 9.9`, which is no version). A request **without** the header is served as 1.0 when it uses a 1.0 method name
//! (the spec says "treat as 0.3", the TCK accepts either, the ACTS draft expects success, and
//! refusing would break curl users for no gain); 0.3 method names are served as 0.3 whatever
//! the header says, because 0.3 clients never send it.
//!
//! **Cards** are the exception, because a 0.3 client fetches the card before it names any
//! method: a card request without the header, or with a 0.x version from 0.3 on, is a 0.3 one
//! ([`wants_v03_card`]) and gets the card with 0.3's fields beside the 1.0 ones
//! (`crate::compat::card_with_v03`); `1.0` (and anything else) gets the 1.0 card.

/// What a header value asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// No header, or an empty one.
    Absent,
    /// `1.0` (any patch).
    V1,
    /// Anything else (kept for the error message).
    Other(String),
}

/// The minor versions served, as (major, minor).
pub const SERVED: &[(u32, u32)] = &[(1, 0)];

/// One component of a version, written canonically: ASCII digits without a leading zero
/// (`0` itself is one), as the spec writes its versions (`1.0`, `0.3`). `01` and `00` are
/// not a version's numbers: `01.0` or `1.00` is refused, not read as `1.0`.
fn number(s: &str) -> Option<u32> {
    let canonical = s == "0" || !s.starts_with('0');
    (canonical && !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse::<u32>().ok())
        .flatten()
}

/// Reads an `A2A-Version` value.
pub fn parse(value: Option<&str>) -> Requested {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Requested::Absent;
    };
    let parts: Vec<&str> = v.split('.').collect();
    let served = match parts.as_slice() {
        [major, minor] | [major, minor, _] => {
            let patch_ok = parts.get(2).is_none_or(|p| number(p).is_some());
            match (number(major), number(minor)) {
                (Some(ma), Some(mi)) if patch_ok => SERVED.contains(&(ma, mi)),
                _ => false,
            }
        }
        _ => false,
    };
    if served {
        Requested::V1
    } else {
        Requested::Other(v.to_string())
    }
}

/// Whether `v` is a 0.x version from 0.3 on (`0.3`, `0.3.0`, `0.9`), the versions whose JSON
/// the 0.3 aliases speak: ASCII digits, `major.minor` with an optional numeric patch.
pub fn is_v03(v: &str) -> bool {
    match v.trim().split('.').collect::<Vec<_>>().as_slice() {
        [major, minor] => matches!((number(major), number(minor)), (Some(0), Some(mi)) if mi >= 3),
        [major, minor, patch] => {
            number(patch).is_some()
                && matches!((number(major), number(minor)), (Some(0), Some(mi)) if mi >= 3)
        }
        _ => false,
    }
}

/// Whether a card request with this `A2A-Version` value asks for the 0.3 card: no value (0.3
/// clients send none, and the spec reads a missing one as 0.3) or a 0.3-era one
/// ([`is_v03`]), as the official JS SDK's legacy card route decides.
pub fn wants_v03_card(value: Option<&str>) -> bool {
    value.is_none_or(|v| v.trim().is_empty() || is_v03(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_implemented_minor_is_served() {
        assert_eq!(parse(None), Requested::Absent);
        assert_eq!(parse(Some(" ")), Requested::Absent);
        assert_eq!(parse(Some("1.0")), Requested::V1);
        assert_eq!(parse(Some("1.0.3")), Requested::V1);
        for refused in [
            "1.1",
            "1.7.2",
            "1.2.3",
            "0.3",
            "99.0",
            "10.0",
            "\u{ff11}.0",
            "1.\u{ff10}",
            "1",
            "1.0.x",
            "1.0.0.0",
            "+1.0",
            "1.-0",
            "v1.0",
            "1.0 ",
            "01.0",
            "1.00",
            "00.1",
            "1.0.03",
            "1.0, 9.9",
        ] {
            let want = Requested::Other(refused.trim().to_string());
            if refused.trim() == "1.0" {
                continue;
            }
            assert_eq!(parse(Some(refused)), want, "{refused:?}");
        }
    }

    #[test]
    fn card_requests_without_a_version_or_with_a_0_3_one_want_the_0_3_card() {
        for v03 in [
            None,
            Some(""),
            Some(" "),
            Some("0.3"),
            Some("0.3.0"),
            Some("0.9"),
        ] {
            assert!(wants_v03_card(v03), "{v03:?}");
        }
        for v1 in [
            "1.0",
            "1.0.3",
            "1.1",
            "0.2",
            "0.2.9",
            "0",
            "0.x",
            "0.3.x",
            "\u{ff10}.3",
            "99.0",
            "00.3",
            "0.03",
        ] {
            assert!(!wants_v03_card(Some(v1)), "{v1:?}");
        }
    }
}
