//! Cutting text to a length without splitting a character: summaries, journalled output, the
//! parts a tool shows. One place, so every caller cuts on a boundary and marks a cut the same way.
//!
//! - [`cut`] counts characters (Unicode scalar values), as summaries and tool answers do;
//! - [`cut_bytes`] counts UTF-8 bytes, for limits on storage and buffers.
//!
//! Both return a [`Cut`]: the kept prefix (`kept`, a borrow of the input) and whether anything
//! was left out (`cut`). Displayed, a `Cut` is the kept text followed by [`ELLIPSIS`] when
//! something was cut; callers that want another marker, or none, use `kept`.
//!
//! A combining mark is a character of its own: a cut may keep a base letter and drop the accent
//! after it. That is the callers' long-standing behaviour (they count `char`s), kept here.

use std::fmt;

/// The marker shown after a cut text.
pub const ELLIPSIS: char = '…';

/// What was kept of a text cut to a length, and whether anything was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut<'a> {
    /// The longest prefix within the limit that ends on a character boundary.
    pub kept: &'a str,
    /// Whether the text was longer than the limit (`kept` is then shorter than the text).
    pub cut: bool,
}

impl fmt::Display for Cut<'_> {
    /// The kept text, then [`ELLIPSIS`] if anything was cut.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kept)?;
        if self.cut {
            write!(f, "{ELLIPSIS}")?;
        }
        Ok(())
    }
}

/// `s` cut to at most `max` characters.
pub fn cut(s: &str, max: usize) -> Cut<'_> {
    match s.char_indices().nth(max) {
        Some((end, _)) => Cut {
            kept: &s[..end],
            cut: true,
        },
        None => Cut {
            kept: s,
            cut: false,
        },
    }
}

/// `s` cut to at most `max` bytes, on a character boundary (so possibly fewer bytes).
pub fn cut_bytes(s: &str, max: usize) -> Cut<'_> {
    if s.len() <= max {
        return Cut {
            kept: s,
            cut: false,
        };
    }
    let mut end = max;
    // Index 0 is always a boundary, so this stops.
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cut {
        kept: &s[..end],
        cut: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_never_cut() {
        assert_eq!(
            cut("", 0),
            Cut {
                kept: "",
                cut: false
            }
        );
        assert_eq!(cut("", 5).to_string(), "");
        assert_eq!(
            cut_bytes("", 0),
            Cut {
                kept: "",
                cut: false
            }
        );
    }

    #[test]
    fn a_limit_of_zero_keeps_nothing_but_marks_the_cut() {
        assert_eq!(
            cut("abc", 0),
            Cut {
                kept: "",
                cut: true
            }
        );
        assert_eq!(cut("abc", 0).to_string(), "…");
        assert_eq!(
            cut_bytes("é", 0),
            Cut {
                kept: "",
                cut: true
            }
        );
    }

    #[test]
    fn text_of_exactly_the_limit_is_kept_whole() {
        assert_eq!(
            cut("héllo", 5),
            Cut {
                kept: "héllo",
                cut: false
            }
        );
        assert_eq!(cut("héllo", 5).to_string(), "héllo");
        // "é" is two bytes: 6 in all.
        assert_eq!(
            cut_bytes("héllo", 6),
            Cut {
                kept: "héllo",
                cut: false
            }
        );
        assert_eq!(cut("héllo", 4).to_string(), "héll…");
        assert_eq!(
            cut_bytes("héllo", 5),
            Cut {
                kept: "héll",
                cut: true
            }
        );
    }

    #[test]
    fn characters_are_counted_not_bytes() {
        let s = "ééé";
        assert_eq!(cut(s, 2).kept, "éé");
        assert!(!cut(s, 3).cut);
        // An emoji is one character of four bytes.
        assert_eq!(
            cut("a😀b", 2),
            Cut {
                kept: "a😀",
                cut: true
            }
        );
    }

    #[test]
    fn a_byte_cut_inside_a_character_drops_the_whole_character() {
        // "😀" is bytes 1..5: every limit inside it keeps only "a".
        for max in 1..5 {
            assert_eq!(
                cut_bytes("a😀b", max),
                Cut {
                    kept: "a",
                    cut: true
                },
                "max {max}"
            );
        }
        assert_eq!(
            cut_bytes("a😀b", 5),
            Cut {
                kept: "a😀",
                cut: true
            }
        );
        // A limit inside the first character keeps nothing.
        assert_eq!(
            cut_bytes("😀", 3),
            Cut {
                kept: "",
                cut: true
            }
        );
    }

    #[test]
    fn a_combining_mark_is_a_character_of_its_own() {
        // "e" + U+0301 (combining acute, two bytes): two characters, three bytes.
        let s = "e\u{301}x";
        assert_eq!(
            cut(s, 1),
            Cut {
                kept: "e",
                cut: true
            }
        );
        assert_eq!(
            cut(s, 2),
            Cut {
                kept: "e\u{301}",
                cut: true
            }
        );
        assert_eq!(
            cut_bytes(s, 2),
            Cut {
                kept: "e",
                cut: true
            }
        );
        assert_eq!(
            cut_bytes(s, 3),
            Cut {
                kept: "e\u{301}",
                cut: true
            }
        );
    }

    #[test]
    fn every_cut_is_a_prefix_on_a_boundary_within_the_limit() {
        let s = "aé😀e\u{301}z€";
        for max in 0..=s.len() + 1 {
            let c = cut_bytes(s, max);
            assert!(s.starts_with(c.kept) && c.kept.len() <= max);
            assert_eq!(c.cut, c.kept.len() < s.len());
            let c = cut(s, max);
            assert!(s.starts_with(c.kept) && c.kept.chars().count() <= max);
            assert_eq!(c.cut, c.kept.len() < s.len());
        }
    }
}
