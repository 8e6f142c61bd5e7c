//! The exact action a person approves, its digest, and how it is shown.
//!
//! An approval binds the person's answer to **exactly** what will run: the engine builds an
//! [`ApprovedAction`] from the action it is about to take (a shell command, an argument list,
//! a patch, a remote request), the interaction carries it, the answer records its digest, and
//! the engine runs only an action whose digest is the one approved.
//!
//! - [`ApprovedAction::exact`] is the action as JSON, byte for byte what runs: never redacted.
//! - [`ApprovedAction::digest`] is `sha256:` + the hex SHA-256 of the RFC 8785 (JCS) canonical
//!   form of `exact`, so anyone can recompute it from the card.
//! - [`ApprovedAction::shown`] is what a person reads: the same text with every invisible or
//!   misleading character escaped ([`escape`]), and [`ApprovedAction::flags`] says what was
//!   escaped and why. Without flags `shown` is the exact text.
//!
//! Escapes: `\n`, `\r`, `\t`, `\e` (ESC), `\xHH` for other C0/C1 controls and DEL, and
//! `\u{HEX}` for bidi controls, zero-width and other invisible characters, unusual spaces, and
//! non-ASCII characters inside a command word (where a homoglyph — a Cyrillic `с` in `сurl` —
//! would run another program than the one a person reads). When anything is escaped, a literal
//! backslash is shown as `\\`, so the shown text reads back to exactly one original.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What an interaction approves: exact, digested and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "camelCase")]
pub struct ApprovedAction {
    /// The action as JSON (`{"kind": "shell", "command": …}` and the like), exactly as it runs.
    #[ts(type = "Record<string, unknown>")]
    pub exact: Value,
    /// `sha256:<hex>` of the JCS canonical form of `exact`.
    pub digest: String,
    /// The action for a person to read, invisible and misleading characters escaped.
    pub shown: String,
    /// What was escaped in `shown`, one entry per kind (empty: `shown` is exact).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<ActionFlag>,
}

/// One kind of character that was escaped in a shown action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "camelCase")]
pub struct ActionFlag {
    /// `control`, `ansi_escape`, `newline`, `tab`, `bidi`, `zero_width`, `invisible`,
    /// `unusual_space` or `non_ascii_command_word`.
    pub code: String,
    /// How many characters of this kind.
    pub count: usize,
    /// What a person should know, in words.
    pub message: String,
}

/// The digest of an exact action: `sha256:` + hex SHA-256 of its RFC 8785 canonical form.
pub fn digest(exact: &Value) -> String {
    use sha2::Digest;
    // JCS of a serde_json::Value cannot fail (no non-finite numbers exist in it); fall back
    // to serde_json's own form rather than panic.
    let bytes = serde_json_canonicalizer::to_vec(exact)
        .unwrap_or_else(|_| serde_json::to_vec(exact).unwrap_or_default());
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(&bytes)))
}

impl ApprovedAction {
    /// An action whose `shown` text the caller built (with [`Escaped`] pieces).
    pub fn new(exact: Value, shown: Escaped) -> Self {
        ApprovedAction {
            digest: digest(&exact),
            exact,
            shown: shown.text,
            flags: shown.flags,
        }
    }

    /// A shell command run with `sh -c` (in `cwd`, when the engine has one).
    pub fn shell(command: &str, cwd: Option<&str>) -> Self {
        let mut exact = serde_json::json!({ "kind": "shell", "command": command });
        if let Some(cwd) = cwd {
            exact["cwd"] = Value::String(cwd.to_string());
        }
        Self::new(exact, escape(command, Mode::Command))
    }

    /// Whether this is the action `digest` approved.
    pub fn is(&self, digest: Option<&str>) -> bool {
        digest == Some(self.digest.as_str())
    }
}

/// How [`escape`] treats its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A shell command: newlines and tabs are escaped and flagged (a newline starts another
    /// command), and non-ASCII characters in command words are escaped.
    Command,
    /// One program argument: like `Command`, and the argument is a command word when it is
    /// the program itself (see [`escape_argv`]).
    Argument { program: bool },
    /// Prose or a patch: newlines and tabs are kept as they are; everything else as `Command`
    /// (no command words).
    Text,
}

/// Escaped text and what was escaped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Escaped {
    pub text: String,
    pub flags: Vec<ActionFlag>,
}

impl Escaped {
    /// Appends another piece (flags of the same kind are added up).
    pub fn push(&mut self, other: Escaped) {
        self.text.push_str(&other.text);
        for f in other.flags {
            self.add_flag(&f.code, f.count);
        }
    }

    /// Appends text that needs no escaping (separators Sextant writes itself).
    pub fn push_plain(&mut self, s: &str) {
        self.text.push_str(s);
    }

    fn add_flag(&mut self, code: &str, count: usize) {
        match self.flags.iter_mut().find(|f| f.code == code) {
            Some(f) => {
                f.count += count;
                f.message = flag_message(code, f.count);
            }
            None => self.flags.push(ActionFlag {
                code: code.to_string(),
                count,
                message: flag_message(code, count),
            }),
        }
    }
}

fn flag_message(code: &str, n: usize) -> String {
    let s = if n == 1 { "" } else { "s" };
    match code {
        "control" => format!("{n} control character{s} (shown as \\xHH)"),
        "ansi_escape" => format!(
            "{n} terminal escape sequence{s} (ESC, shown as \\e): it can hide or rewrite text in a terminal"
        ),
        "newline" => format!(
            "{n} line break{s} (shown as \\n or \\r): each line runs as a command of its own"
        ),
        "tab" => format!("{n} tab{s} (shown as \\t)"),
        "bidi" => format!(
            "{n} bidirectional control{s} (shown as \\u{{…}}): they reorder how text is displayed"
        ),
        "zero_width" => format!("{n} zero-width character{s} (shown as \\u{{…}})"),
        "invisible" => format!("{n} invisible character{s} (shown as \\u{{…}})"),
        "unusual_space" => format!("{n} unusual space{s} (shown as \\u{{…}})"),
        "non_ascii_command_word" => format!(
            "{n} non-ASCII character{s} in a program name (shown as \\u{{…}}): it may look like another program's"
        ),
        other => format!("{n} × {other}"),
    }
}

/// What a character is, for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Plain,
    Control,
    Newline,
    Tab,
    Bidi,
    ZeroWidth,
    Invisible,
    UnusualSpace,
}

fn class(c: char) -> Class {
    match c {
        '\n' | '\r' | '\u{2028}' | '\u{2029}' | '\u{85}' => Class::Newline,
        '\t' => Class::Tab,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => Class::Control,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            Class::Bidi
        }
        '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{180e}' => Class::ZeroWidth,
        '\u{ad}'
        | '\u{34f}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{17b4}'
        | '\u{17b5}'
        | '\u{2061}'..='\u{2064}'
        | '\u{206a}'..='\u{206f}'
        | '\u{3164}'
        | '\u{ffa0}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e007f}'
        | '\u{e0100}'..='\u{e01ef}' => Class::Invisible,
        '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => {
            Class::UnusualSpace
        }
        _ => Class::Plain,
    }
}

/// Whether `c` ends a shell word and puts the next word in command position.
fn starts_command(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '(' | ')' | '`' | '{' | '}' | '!')
}

/// Escapes `text` for a person to read (see the module docs).
pub fn escape(text: &str, mode: Mode) -> Escaped {
    let mut out = Escaped {
        text: String::with_capacity(text.len()),
        flags: Vec::new(),
    };
    // First pass: does anything need escaping? Then backslashes are doubled too.
    let words = command_word_mask(text, mode);
    let needs = text.chars().enumerate().any(|(i, c)| {
        let cl = class(c);
        let kept = mode == Mode::Text && matches!(cl, Class::Newline | Class::Tab) && c != '\u{85}';
        (cl != Class::Plain && !kept) || (!c.is_ascii() && words.get(i).copied().unwrap_or(false))
    });
    if !needs {
        out.text.push_str(text);
        return out;
    }
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let cl = class(c);
        let in_word = words.get(i).copied().unwrap_or(false);
        match cl {
            Class::Plain if !c.is_ascii() && in_word => {
                out.text.push_str(&format!("\\u{{{:04X}}}", c as u32));
                out.add_flag("non_ascii_command_word", 1);
            }
            Class::Plain if c == '\\' => out.text.push_str("\\\\"),
            Class::Plain => out.text.push(c),
            Class::Newline | Class::Tab if mode == Mode::Text && c != '\u{85}' => out.text.push(c),
            Class::Newline => {
                out.text.push_str(match c {
                    '\n' => "\\n",
                    '\r' => "\\r",
                    '\u{85}' => "\\x85",
                    '\u{2028}' => "\\u{2028}",
                    _ => "\\u{2029}",
                });
                out.add_flag("newline", 1);
            }
            Class::Tab => {
                out.text.push_str("\\t");
                out.add_flag("tab", 1);
            }
            Class::Control if c == '\u{1b}' => {
                out.text.push_str("\\e");
                let next = chars.get(i + 1).copied();
                if matches!(next, Some('[' | ']' | '(' | ')' | 'P' | '_' | '^' | 'c')) {
                    out.add_flag("ansi_escape", 1);
                } else {
                    out.add_flag("control", 1);
                }
            }
            Class::Control => {
                out.text.push_str(&format!("\\x{:02X}", c as u32));
                out.add_flag("control", 1);
            }
            Class::Bidi | Class::ZeroWidth | Class::Invisible | Class::UnusualSpace => {
                out.text.push_str(&format!("\\u{{{:04X}}}", c as u32));
                out.add_flag(
                    match cl {
                        Class::Bidi => "bidi",
                        Class::ZeroWidth => "zero_width",
                        Class::Invisible => "invisible",
                        _ => "unusual_space",
                    },
                    1,
                );
            }
        }
    }
    out
}

/// Escapes an argument list, shown as its arguments separated by spaces, each one in single
/// quotes when it has a space, a quote or nothing in it (the program is `argv[0]`).
pub fn escape_argv(argv: &[String]) -> Escaped {
    let mut out = Escaped::default();
    for (i, arg) in argv.iter().enumerate() {
        if i > 0 {
            out.push_plain(" ");
        }
        let quote = arg.is_empty()
            || arg
                .chars()
                .any(|c| c == ' ' || c == '\'' || c == '"' || starts_command(c) || c == '$');
        if quote {
            out.push_plain("'");
        }
        out.push(escape(arg, Mode::Argument { program: i == 0 }));
        if quote {
            out.push_plain("'");
        }
    }
    out
}

/// For each char of `text`, whether it belongs to a command word (the program a shell runs:
/// the first word of each simple command, after any `NAME=value` assignments).
fn command_word_mask(text: &str, mode: Mode) -> Vec<bool> {
    match mode {
        Mode::Text => return Vec::new(),
        Mode::Argument { program } => return vec![program; text.chars().count()],
        Mode::Command => {}
    }
    let chars: Vec<char> = text.chars().collect();
    let mut mask = vec![false; chars.len()];
    let mut at_command = true;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() && c != '\n' || class(c) == Class::UnusualSpace {
            i += 1;
            continue;
        }
        if c == '\n' || starts_command(c) {
            at_command = true;
            i += 1;
            continue;
        }
        if c == '$' && chars.get(i + 1) == Some(&'(') {
            at_command = true;
            i += 2;
            continue;
        }
        // A word: up to whitespace or an operator.
        let start = i;
        while i < chars.len()
            && !(chars[i].is_whitespace() || starts_command(chars[i]))
            && !(chars[i] == '$' && chars.get(i + 1) == Some(&'('))
        {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let assignment = word.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
        if at_command && !assignment {
            for m in &mut mask[start..i] {
                *m = true;
            }
            at_command = false;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(s: &str) -> (String, Vec<String>) {
        let e = escape(s, Mode::Command);
        (e.text, e.flags.into_iter().map(|f| f.code).collect())
    }

    #[test]
    fn plain_commands_are_shown_exactly() {
        for c in [
            "ls -la /tmp",
            "PASSWORD=x;touch${IFS}/tmp/f",
            "echo $(id) `whoami` && printf 'a\\tb'",
            "echo héllo wörld",
        ] {
            assert_eq!(shown(c), (c.to_string(), vec![]), "{c}");
        }
    }

    #[test]
    fn invisible_and_misleading_characters_are_escaped_and_flagged() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("echo a\nrm -rf ~", "echo a\\nrm -rf ~", &["newline"]),
            ("echo a\tb", "echo a\\tb", &["tab"]),
            (
                "echo \u{1b}[2Khidden",
                "echo \\e[2Khidden",
                &["ansi_escape"],
            ),
            ("echo \u{7}", "echo \\x07", &["control"]),
            ("echo \u{202e}txt.exe", "echo \\u{202E}txt.exe", &["bidi"]),
            ("rm\u{200b} -rf /", "rm\\u{200B} -rf /", &["zero_width"]),
            (
                "\u{441}url evil",
                "\\u{0441}url evil",
                &["non_ascii_command_word"],
            ),
            (
                "ls; \u{441}at x",
                "ls; \\u{0441}at x",
                &["non_ascii_command_word"],
            ),
            (
                "X=1 \u{441}at",
                "X=1 \\u{0441}at",
                &["non_ascii_command_word"],
            ),
            ("echo a\\b\n", "echo a\\\\b\\n", &["newline"]),
            ("echo\u{a0}x", "echo\\u{00A0}x", &["unusual_space"]),
            ("echo \u{e0041}", "echo \\u{E0041}", &["invisible"]),
        ];
        for (input, want, flags) in cases {
            let (text, got) = shown(input);
            assert_eq!(text, *want, "{input:?}");
            assert_eq!(got, *flags, "{input:?}");
        }
    }

    #[test]
    fn text_mode_keeps_lines_and_argv_quotes() {
        let e = escape("line 1\nline\t2\u{202e}", Mode::Text);
        assert_eq!(e.text, "line 1\nline\t2\\u{202E}");
        assert_eq!(e.flags.len(), 1);
        let argv: Vec<String> = ["g\u{456}t", "commit", "-m", "a b", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = escape_argv(&argv);
        assert_eq!(e.text, "g\\u{0456}t commit -m 'a b' ''");
        assert_eq!(e.flags[0].code, "non_ascii_command_word");
    }

    #[test]
    fn the_digest_is_sha256_of_the_canonical_action() {
        use sha2::Digest;
        let a = ApprovedAction::shell("echo hi", None);
        let canonical = br#"{"command":"echo hi","kind":"shell"}"#;
        assert_eq!(
            a.digest,
            format!("sha256:{}", hex::encode(sha2::Sha256::digest(canonical)))
        );
        assert!(a.is(Some(&a.digest)));
        assert!(!ApprovedAction::shell("echo hi ", None).is(Some(&a.digest)));
        assert!(!a.is(None));
    }
}
