//! What a registration checks before it pins anything, and how it says what will not work
//! (issue #35 item 7: "registration tells the truth").
//!
//! A peer is registered only when it can be called: its card is read (a closed port, a
//! name that does not resolve, a web server's 404 page or a card that is not JSON is said
//! as such), checked (an A2A 0.3 card, or one that is not A2A 1.0 JSON, is refused naming
//! every field that is wrong, at once), and one harmless call is made over the card's
//! JSON-RPC interface: `GetTask` of a task id that cannot exist, which an A2A 1.0 server
//! answers with TaskNotFound (-32001). That answer proves the endpoint is there and speaks
//! A2A 1.0 JSON-RPC; any other answer is explained. Each refusal is a
//! [`PeerError::Unusable`] with a code of its own ([`Code`]) and its problems by field.
//! `pin_on_first_use` skips all of it (the card is read at first use).

use url::Url;

use crate::PeerError;
use crate::client::card::{self, CardProblem};
use crate::client::{ClientError, FetchedCard};

/// Why a peer cannot be registered: the REST error's `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Nothing answers at its address (refused, timed out, DNS, TLS).
    Unreachable,
    /// What answers is not an agent card (an HTTP error, a web page, not JSON).
    NotA2a,
    /// An A2A 0.3 card with no 1.0 interface.
    A2a03Only,
    /// JSON, but not an A2A 1.0 card Sextant can call.
    CardInvalid,
    /// The card is fine, but its JSON-RPC interface does not answer as A2A 1.0 does.
    NotA2a10,
    /// The peer wants a credential, or refused the one given.
    AuthRefused,
    /// The peer refuses even a call started here, at its A2A-Hop limit.
    HopLimited,
}

impl Code {
    /// The REST error code.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Unreachable => "peer_unreachable",
            Code::NotA2a => "peer_not_a2a",
            Code::A2a03Only => "peer_a2a_0_3_only",
            Code::CardInvalid => "peer_card_invalid",
            Code::NotA2a10 => "peer_not_a2a_1_0",
            Code::AuthRefused => "peer_auth_refused",
            Code::HopLimited => "peer_hop_limited",
        }
    }
}

fn unusable(code: Code, message: String, problems: Vec<(String, String)>) -> PeerError {
    let problems = if problems.is_empty() {
        vec![("url".to_string(), message.clone())]
    } else {
        problems
    };
    PeerError::Unusable {
        code: code.as_str(),
        message,
        problems,
    }
}

/// A card that could not be read, in words (the guard's refusal stays a refusal).
pub fn fetch_failure(name: &str, url: &Url, e: ClientError) -> PeerError {
    let hint = "(to register it anyway, unchecked, set pin_on_first_use: its card is then \
                read at its first call)";
    match e {
        ClientError::Refused(r) => PeerError::Refused(format!("{name}: {r}")),
        e @ (ClientError::Connect(_) | ClientError::Timeout(_) | ClientError::Resolve(_)) => {
            unusable(
                Code::Unreachable,
                format!("cannot read {name}'s card: {e} {hint}"),
                Vec::new(),
            )
        }
        ClientError::NoCard(m) => unusable(Code::NotA2a, format!("{name}: {m}"), Vec::new()),
        e @ (ClientError::Redirect { .. } | ClientError::TooLarge { .. }) => unusable(
            Code::NotA2a,
            format!("{name}: reading its card at {url}: {e}"),
            Vec::new(),
        ),
        other => PeerError::from_client(name, other),
    }
}

/// A card Sextant cannot call: an A2A 0.3 card, or one whose problems stop calls (every
/// problem is listed, those that stop calls first). `None` when it can be called.
pub fn card_refusal(name: &str, fetched: &FetchedCard) -> Option<PeerError> {
    let mut problems = card::check(&fetched.raw, &fetched.url);
    if !problems.iter().any(|p| p.blocks_calls) {
        return None;
    }
    problems.sort_by_key(|p| !p.blocks_calls);
    let at = &fetched.url;
    if card::looks_like_v03(&fetched.raw) {
        let version = fetched.raw["protocolVersion"].as_str().unwrap_or("0.x");
        let message = format!(
            "{name}'s card ({at}) is an A2A 0.3 card (protocolVersion {version}, its address in \
             0.3's top-level url, no A2A 1.0 interface in supportedInterfaces): it is 0.3-only, \
             and Sextant calls A2A 1.0 agents only. An agent built on an A2A 1.x SDK (the \
             official Python and JS SDKs are 1.x) can be a peer; this one cannot."
        );
        return Some(unusable(
            Code::A2a03Only,
            message.clone(),
            fields(message, &problems),
        ));
    }
    let blocking: Vec<&CardProblem> = problems.iter().filter(|p| p.blocks_calls).collect();
    let message = format!(
        "{name}'s card ({at}) is not A2A 1.0 JSON that Sextant can call: {}",
        blocking
            .iter()
            .map(|p| format!("{}: {}", p.field, p.message))
            .collect::<Vec<_>>()
            .join("; ")
    );
    Some(unusable(
        Code::CardInvalid,
        message.clone(),
        fields(message, &problems),
    ))
}

/// The fields of a card refusal: the URL (what the person typed) with the whole message,
/// then every problem at its path in the card.
fn fields(message: String, problems: &[CardProblem]) -> Vec<(String, String)> {
    std::iter::once(("url".to_string(), message))
        .chain(
            problems
                .iter()
                .map(|p| (p.field.clone(), p.message.clone())),
        )
        .collect()
}

/// The task id the probe asks for: a new UUID (the form servers that check ids accept), so
/// one no server has.
pub fn probe_task_id() -> String {
    a2a::new_message_id()
}

/// What the probe's answer means: `None` for TaskNotFound (the endpoint speaks A2A 1.0),
/// else the refusal that says what is wrong. `rpc` is the JSON-RPC interface's URL,
/// `with_token` whether a token was sent.
pub fn probe_refusal(
    name: &str,
    rpc: &Url,
    with_token: bool,
    answer: Result<a2a::Task, ClientError>,
) -> Option<PeerError> {
    let not_10 = |m: String| Some(unusable(Code::NotA2a10, m, Vec::new()));
    let e = match answer {
        Ok(task) => {
            return not_10(format!(
                "{name}'s JSON-RPC interface ({rpc}) answered GetTask of a task that does not \
                 exist with a task ({}), where an A2A 1.0 server answers TaskNotFound \
                 (-32001): it does not read tasks as A2A 1.0 does",
                task.id
            ));
        }
        Err(e) => e,
    };
    match e {
        ClientError::Rpc { code: -32001, .. } => None,
        ClientError::Rpc { code: -32601, .. } => not_10(format!(
            "{name}'s JSON-RPC interface ({rpc}) does not know GetTask (error -32601, method \
             not found): it does not speak A2A 1.0 (an A2A 0.3 server calls it tasks/get)"
        )),
        ClientError::Rpc {
            code: -32009,
            message,
        } => not_10(format!(
            "{name}'s JSON-RPC interface ({rpc}) refuses A2A-Version 1.0 (error -32009: \
             {message}): it serves another version of A2A"
        )),
        ClientError::Rpc { code, message } => not_10(format!(
            "{name}'s JSON-RPC interface ({rpc}) answered GetTask of a task that does not \
             exist with error {code} ({message}), where an A2A 1.0 server answers \
             TaskNotFound (-32001)"
        )),
        ClientError::Protocol(m) => not_10(format!(
            "{name}'s JSON-RPC interface ({rpc}) does not answer in A2A 1.0 JSON: {m}"
        )),
        ClientError::Http { status: 401, .. } => Some(unusable(
            Code::AuthRefused,
            if with_token {
                format!("{name} refused the token (HTTP 401 from {rpc}): check the token")
            } else {
                format!(
                    "{name} wants a credential (HTTP 401 from {rpc}): register it with the \
                     token it gave you"
                )
            },
            vec![("token".into(), "the peer did not accept this".into())],
        )),
        ClientError::Http {
            status: 403,
            detail,
        } if detail.to_ascii_lowercase().contains("a2a-hop") => Some(unusable(
            Code::HopLimited,
            format!(
                "{name} refuses every call from here (HTTP 403 from {rpc}{detail}): a call \
                     started here carries A2A-Hop 1, and it accepts fewer; raise its max_hops"
            ),
            Vec::new(),
        )),
        ClientError::Http {
            status: 403,
            detail,
        } => Some(unusable(
            Code::AuthRefused,
            format!("{name} refused the call (HTTP 403 from {rpc}{detail})"),
            Vec::new(),
        )),
        ClientError::Http {
            status: status @ (404 | 405),
            ..
        } => not_10(format!(
            "HTTP {status} from {rpc}: there is no A2A JSON-RPC endpoint where {name}'s card \
             says its JSON-RPC interface is"
        )),
        ClientError::Http { status, detail } => not_10(format!("HTTP {status} from {rpc}{detail}")),
        ClientError::Refused(r) => Some(PeerError::Refused(format!(
            "{name}: its card's JSON-RPC interface: {r}"
        ))),
        e @ (ClientError::Connect(_) | ClientError::Timeout(_) | ClientError::Resolve(_)) => {
            Some(unusable(
                Code::Unreachable,
                format!("{name}'s card was read, but its JSON-RPC interface ({rpc}) is not: {e}"),
                Vec::new(),
            ))
        }
        other => not_10(format!("{name}'s JSON-RPC interface ({rpc}): {other}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::client::{NetFailure, network_words};

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    fn parts(e: PeerError) -> (&'static str, String, Vec<(String, String)>) {
        match e {
            PeerError::Unusable {
                code,
                message,
                problems,
            } => (code, message, problems),
            other => panic!("not a refusal: {other:?}"),
        }
    }

    fn fetched(raw: serde_json::Value) -> FetchedCard {
        FetchedCard {
            url: url("http://127.0.0.1:9/.well-known/agent-card.json"),
            raw,
        }
    }

    /// Network failures are said for a person: where, what happened, what to check; never
    /// the libraries' chain of errors.
    #[test]
    fn network_failures_are_worded_for_a_person() {
        use std::io::ErrorKind;
        let f = |io_kind, timeout, connect, chain: &[&str]| NetFailure {
            target: "127.0.0.1:4321".into(),
            timeout,
            connect,
            io_kind,
            chain: chain.iter().map(|s| s.to_string()).collect(),
        };
        let lib = [
            "error sending request for url (http://127.0.0.1:4321/.well-known/agent-card.json)",
            "client error (Connect)",
            "tcp connect error",
            "Connection refused (os error 111)",
        ];
        let cases = [
            (
                f(Some(ErrorKind::ConnectionRefused), false, true, &lib),
                "connection refused at 127.0.0.1:4321: is the peer running?",
            ),
            (
                f(None, true, true, &["operation timed out"]),
                "no connection to 127.0.0.1:4321 in time: is the address right",
            ),
            (
                f(None, true, false, &["operation timed out"]),
                "127.0.0.1:4321 did not answer in time",
            ),
            (
                f(
                    None,
                    false,
                    true,
                    &["invalid peer certificate: UnknownIssuer"],
                ),
                "TLS with 127.0.0.1:4321 failed: its certificate is not signed by an authority \
                 this machine trusts (for a private CA, add it as ca_file in outbound.toml)",
            ),
            (
                f(
                    None,
                    false,
                    true,
                    &["invalid peer certificate: NotValidForName"],
                ),
                "TLS with 127.0.0.1:4321 failed: its certificate is for another name",
            ),
            (
                f(
                    None,
                    false,
                    true,
                    &["received corrupt message of type InvalidContentType"],
                ),
                "it does not speak TLS there (is it plain http?)",
            ),
            (
                f(
                    Some(ErrorKind::ConnectionReset),
                    false,
                    false,
                    &["connection reset"],
                ),
                "127.0.0.1:4321 closed the connection without an answer",
            ),
        ];
        for (failure, want) in cases {
            let got = network_words(&failure);
            assert!(got.contains(want), "{want:?} not in {got:?}");
            for raw in [
                "os error",
                "tcp connect",
                "error sending request",
                "client error",
            ] {
                assert!(!got.contains(raw), "{raw:?} in {got:?}");
            }
        }
        let e = fetch_failure(
            "helper",
            &url("http://127.0.0.1:4321/"),
            ClientError::Connect(network_words(&cases_refused())),
        );
        let (code, message, problems) = parts(e);
        assert_eq!(code, "peer_unreachable");
        assert_eq!(
            message,
            "cannot read helper's card: connection refused at 127.0.0.1:4321: is the peer \
             running? (to register it anyway, unchecked, set pin_on_first_use: its card is then \
             read at its first call)"
        );
        assert_eq!(problems, [("url".to_string(), message.clone())]);
    }

    fn cases_refused() -> NetFailure {
        NetFailure {
            target: "127.0.0.1:4321".into(),
            io_kind: Some(std::io::ErrorKind::ConnectionRefused),
            connect: true,
            ..NetFailure::default()
        }
    }

    #[test]
    fn a_03_card_and_a_wrong_card_say_what_will_not_work() {
        let v03 = json!({"name": "Old", "description": "d", "version": "1",
            "url": "http://127.0.0.1:9/", "protocolVersion": "0.3.0",
            "capabilities": {}, "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
            "skills": []});
        let (code, message, problems) = parts(card_refusal("old", &fetched(v03)).expect("refused"));
        assert_eq!(code, "peer_a2a_0_3_only");
        assert!(
            message.contains("0.3-only") && message.contains("A2A 1.0"),
            "{message}"
        );
        assert_eq!(problems[0].0, "url");
        assert!(
            problems
                .iter()
                .any(|(f, _)| f == "card.supportedInterfaces"),
            "{problems:?}"
        );

        let wrong = json!({"name": "W", "description": "d",
            "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": "x"}]});
        let (code, message, problems) = parts(card_refusal("w", &fetched(wrong)).expect("refused"));
        assert_eq!(code, "peer_card_invalid");
        assert!(
            message.starts_with("w's card (http://127.0.0.1:9/"),
            "{message}"
        );
        assert!(
            message.contains("card.version: the card has no version")
                && message.contains("card.skills[0].tags"),
            "{message}"
        );
        let named: Vec<&str> = problems.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            named[..3],
            ["url", "card.version", "card.skills[0].tags"],
            "{problems:?}"
        );

        // Problems that do not stop calls do not stop a registration.
        let mut fine = json!({"name": "F", "description": "", "version": "1",
            "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                                    {"url": "127.0.0.1:9", "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []});
        assert!(card_refusal("f", &fetched(fine.clone())).is_none());
        // JSON-RPC for 0.3 only, beside gRPC for 1.0 (which Sextant does not call): not a
        // 0.3-only server, but nothing Sextant can call either.
        fine["supportedInterfaces"][0]["protocolVersion"] = json!("0.3");
        let (code, message, _) = parts(card_refusal("f", &fetched(fine.clone())).expect("refused"));
        assert_eq!(code, "peer_card_invalid");
        assert!(message.contains("JSON-RPC for A2A 0.3 only"), "{message}");
        fine["supportedInterfaces"]
            .as_array_mut()
            .expect("list")
            .pop();
        let (code, ..) = parts(card_refusal("f", &fetched(fine)).expect("refused"));
        assert_eq!(code, "peer_a2a_0_3_only");
    }

    #[test]
    fn the_probe_passes_on_task_not_found_only_and_explains_the_rest() {
        let rpc = url("http://127.0.0.1:9/rpc");
        let refusal = |answer| probe_refusal("p", &rpc, false, answer).map(parts);
        assert!(
            refusal(Err(ClientError::Rpc {
                code: -32001,
                message: "Task not found".into()
            }))
            .is_none()
        );
        let cases: Vec<(Result<a2a::Task, ClientError>, &str, &str)> = vec![
            (
                Err(ClientError::Rpc {
                    code: -32601,
                    message: "Method not found".into(),
                }),
                "peer_not_a2a_1_0",
                "does not know GetTask (error -32601, method not found)",
            ),
            (
                Err(ClientError::Rpc {
                    code: -32009,
                    message: "Version not supported".into(),
                }),
                "peer_not_a2a_1_0",
                "refuses A2A-Version 1.0",
            ),
            (
                Err(ClientError::Rpc {
                    code: -32603,
                    message: "boom".into(),
                }),
                "peer_not_a2a_1_0",
                "with error -32603 (boom), where an A2A 1.0 server answers TaskNotFound (-32001)",
            ),
            (
                Err(ClientError::Http {
                    status: 401,
                    detail: String::new(),
                }),
                "peer_auth_refused",
                "p wants a credential (HTTP 401 from http://127.0.0.1:9/rpc)",
            ),
            (
                Err(ClientError::Http {
                    status: 403,
                    detail: ": A2A-Hop: 1 refused: …".into(),
                }),
                "peer_hop_limited",
                "raise its max_hops",
            ),
            (
                Err(ClientError::Http {
                    status: 404,
                    detail: ": an HTML page, not an A2A answer".into(),
                }),
                "peer_not_a2a_1_0",
                "HTTP 404 from http://127.0.0.1:9/rpc: there is no A2A JSON-RPC endpoint",
            ),
            (
                Err(ClientError::Protocol(
                    "the response is not JSON: expected value".into(),
                )),
                "peer_not_a2a_1_0",
                "does not answer in A2A 1.0 JSON: the response is not JSON",
            ),
            (
                Err(ClientError::Connect(network_words(&cases_refused()))),
                "peer_unreachable",
                "its JSON-RPC interface (http://127.0.0.1:9/rpc) is not: connection refused",
            ),
        ];
        for (answer, want_code, want) in cases {
            let (code, message, _) = refusal(answer).expect("refused");
            assert_eq!(code, want_code, "{message}");
            assert!(message.contains(want), "{want:?} not in {message:?}");
        }
        let with_token = probe_refusal(
            "p",
            &rpc,
            true,
            Err(ClientError::Http {
                status: 401,
                detail: String::new(),
            }),
        )
        .map(parts)
        .expect("refused");
        assert!(with_token.1.contains("refused the token"), "{with_token:?}");
        assert_eq!(with_token.2[0].0, "token");
    }
}
