//! Redaction of credential-shaped text in what Sextant shows people and peers (interaction
//! descriptions, commands). Deliberately simple and conservative: it hides values, never the
//! shape of the command, so a person can still judge what is being asked.

/// Key names whose `KEY=value` / `--key value` values are hidden.
const SECRET_NAMES: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "api-key",
    "auth",
    "credential",
    "private",
];

/// Prefixes of well-known credential formats.
const SECRET_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "AIza",
    "glpat-",
    "sxt_",
    "eyJ",
];

const MASK: &str = "***";

fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| lower.contains(s))
}

fn looks_like_credential(word: &str) -> bool {
    let w = word.trim_matches(|c: char| c == '"' || c == '\'');
    SECRET_PREFIXES
        .iter()
        .any(|p| w.starts_with(p) && w.len() >= p.len() + 8)
}

fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Masks credential-shaped runs inside a word (e.g. a token embedded in a URL).
fn mask_embedded(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut i = 0;
    let bytes = word.as_bytes();
    while i < word.len() {
        let at_boundary = i == 0 || !token_char(bytes[i - 1] as char);
        let hit = at_boundary
            .then(|| SECRET_PREFIXES.iter().find(|p| word[i..].starts_with(**p)))
            .flatten();
        if let Some(p) = hit {
            let run = word[i..]
                .find(|c: char| !token_char(c))
                .unwrap_or(word.len() - i);
            if run >= p.len() + 8 {
                out.push_str(MASK);
                i += run;
                continue;
            }
        }
        let ch = word[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Replaces secret values in `text` with `***`.
pub fn redact(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut hide_next = false;
    for word in text.split(' ') {
        if hide_next && !word.is_empty() {
            out.push(MASK.into());
            hide_next = false;
            continue;
        }
        if let Some((k, v)) = word.split_once('=')
            && !v.is_empty()
            && (is_secret_name(k) || looks_like_credential(v))
        {
            out.push(format!("{k}={MASK}"));
            continue;
        }
        if looks_like_credential(word) {
            out.push(MASK.into());
            continue;
        }
        let flag = word.trim_start_matches('-');
        if (word.starts_with("--") || word.starts_with('-')) && is_secret_name(flag) {
            hide_next = true;
        }
        if word.eq_ignore_ascii_case("bearer") || word.eq_ignore_ascii_case("authorization:") {
            hide_next = true;
        }
        out.push(mask_embedded(word));
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn hides_values_and_keeps_the_command_shape() {
        assert_eq!(redact("ls -la /tmp"), "ls -la /tmp");
        assert_eq!(
            redact("API_TOKEN=abc123 ./deploy.sh"),
            "API_TOKEN=*** ./deploy.sh"
        );
        assert_eq!(
            redact("curl -H 'Authorization: Bearer abcdef' https://x"),
            "curl -H 'Authorization: Bearer *** https://x"
        );
        assert_eq!(
            redact("mysql --password hunter2 db"),
            "mysql --password *** db"
        );
        assert_eq!(
            redact("export OPENAI=sk-proj-1234567890abcdef"),
            "export OPENAI=***"
        );
        assert_eq!(
            redact("git push https://ghp_abcdefghijklmnop@github.com"),
            "git push https://***@github.com"
        );
        assert_eq!(redact("cat skeleton.txt"), "cat skeleton.txt");
        assert_eq!(redact("echo ghp_abcdefghijklmnop"), "echo ***");
    }
}
