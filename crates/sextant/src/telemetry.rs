//! Logs and traces: the process's `tracing` subscriber.
//!
//! Logs go to stderr, filtered by `RUST_LOG` (default `info`), as before traces existed.
//! Traces are off unless an OTLP endpoint is configured ([`traces_endpoint`]): then the trace
//! spans (`tracing` target [`sextant_a2a::trace::TARGET`]; admission, turn, engine, interaction
//! wait, inbound and outbound A2A calls) are exported over OTLP/HTTP with protobuf bodies, in
//! batches, as service `sextant`. Nothing else is exported: no log lines, no other crate's
//! spans. Off, no exporter exists, the trace spans are disabled (no subscriber layer enables
//! their target), and no `traceparent` is stored or sent.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{EnvFilter, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The `service.name` of every exported span.
pub const SERVICE_NAME: &str = "sextant";

/// The standard variables read when `--otlp-endpoint` is not given (the OTLP exporter spec's
/// meaning: the traces variable is the full URL, the general one a base URL).
pub const OTEL_TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
pub const OTEL_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// Where traces go: the full URL spans are POSTed to, or `None` (traces off).
///
/// `flag` is `--otlp-endpoint` / `SEXTANT_OTLP_ENDPOINT`, a base URL like
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` is appended). Without it,
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), then `OTEL_EXPORTER_OTLP_ENDPOINT`. Empty
/// values count as unset. Unlike the SDK's own default, nothing configured means no export
/// at all, never `localhost:4318`. Only `http` and `https` URLs are accepted.
pub fn traces_endpoint(
    flag: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<url::Url>> {
    let set = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let (raw, base, from) = match set(flag.map(String::from)) {
        Some(v) => (v, true, "--otlp-endpoint"),
        None => match set(env(OTEL_TRACES_ENDPOINT)) {
            Some(v) => (v, false, OTEL_TRACES_ENDPOINT),
            None => match set(env(OTEL_ENDPOINT)) {
                Some(v) => (v, true, OTEL_ENDPOINT),
                None => return Ok(None),
            },
        },
    };
    let mut url =
        url::Url::parse(raw.trim()).with_context(|| format!("{from}: {raw:?} is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        bail!("{from}: {raw:?} must be an http:// or https:// URL");
    }
    if base {
        let path = format!("{}/v1/traces", url.path().trim_end_matches('/'));
        url.set_path(&path);
    }
    Ok(Some(url))
}

/// The trace pipeline while the process runs: flush and stop it with [`Telemetry::shutdown`].
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Whether traces are exported.
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }

    /// Exports what is still queued (bounded by the exporter's timeout) and stops the
    /// exporter. Blocks: call it outside the async runtime.
    pub fn shutdown(self) {
        if let Some(p) = self.provider
            && let Err(e) = p.shutdown_with_timeout(Duration::from_secs(5))
        {
            eprintln!("sextant: traces: the last spans may not have been exported: {e}");
        }
    }
}

/// The OTLP exporter and its batch processor for `endpoint`; `None` (nothing built, no
/// thread started) without one.
fn provider(endpoint: Option<&url::Url>) -> Result<Option<SdkTracerProvider>> {
    let Some(endpoint) = endpoint else {
        return Ok(None);
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        // http/protobuf whatever OTEL_EXPORTER_OTLP_PROTOCOL says: the only one built in.
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint.as_str())
        .build()
        .context("cannot set up the OTLP trace exporter")?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(SERVICE_NAME)
        .build();
    Ok(Some(
        SdkTracerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(exporter)
            .build(),
    ))
}

/// Installs the process's subscriber: logs to stderr, and trace export when `endpoint` is
/// `Some` (see [`traces_endpoint`]). Once per process.
pub fn init(endpoint: Option<&url::Url>) -> Result<Telemetry> {
    let logs = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info"))
        // Trace spans are for the exporter; in log lines they would only add prefixes.
        .add_directive(
            format!("{}=off", sextant_a2a::trace::TARGET)
                .parse()
                .context("the log filter")?,
        );
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(logs);
    let provider = provider(endpoint)?;
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer(SERVICE_NAME))
            // Span events would carry log messages, which may quote input: spans only.
            .with_filter(Targets::new().with_target(sextant_a2a::trace::TARGET, LevelFilter::INFO))
    });
    tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init()
        .context("a tracing subscriber is already installed")?;
    if let Some(e) = endpoint {
        tracing::info!(endpoint = %e, service = SERVICE_NAME, "traces: exporting over OTLP/HTTP");
    }
    Ok(Telemetry { provider })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    fn resolved(flag: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        traces_endpoint(flag, env(vars))
            .expect("valid")
            .map(|u| u.to_string())
    }

    #[test]
    fn nothing_configured_is_off_and_builds_no_exporter() {
        assert_eq!(resolved(None, &[]), None);
        assert_eq!(resolved(Some(""), &[(OTEL_ENDPOINT, " ")]), None);
        // Off: no provider, so no batch thread and no HTTP client exist.
        let p = provider(None).expect("no error");
        assert!(p.is_none());
    }

    #[test]
    fn the_flag_wins_then_the_traces_variable_then_the_general_one() {
        assert_eq!(
            resolved(
                Some("http://collector:4318"),
                &[
                    (OTEL_TRACES_ENDPOINT, "http://t/x"),
                    (OTEL_ENDPOINT, "http://g")
                ]
            )
            .as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(
            resolved(
                None,
                &[
                    (OTEL_TRACES_ENDPOINT, "http://t:1/custom/path"),
                    (OTEL_ENDPOINT, "http://g")
                ]
            )
            .as_deref(),
            Some("http://t:1/custom/path")
        );
        assert_eq!(
            resolved(None, &[(OTEL_ENDPOINT, "https://g.example/otlp/")]).as_deref(),
            Some("https://g.example/otlp/v1/traces")
        );
    }

    #[test]
    fn a_bad_endpoint_stops_the_start() {
        for bad in ["collector:4318", "ftp://c/", "not a url", "file:///tmp/x"] {
            let e = traces_endpoint(Some(bad), env(&[])).expect_err(bad);
            assert!(e.to_string().contains("--otlp-endpoint"), "{e}");
        }
    }

    #[test]
    fn an_endpoint_builds_an_exporter() {
        let url = url::Url::parse("http://127.0.0.1:9/v1/traces").expect("url");
        let p = provider(Some(&url)).expect("built").expect("a provider");
        p.shutdown_with_timeout(Duration::from_secs(1))
            .expect("shuts down with nothing queued");
    }
}
