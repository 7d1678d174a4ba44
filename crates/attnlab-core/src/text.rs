//! Echoing user-supplied text in one-line messages: control characters escaped, long values
//! shortened so a 1 MB argument never becomes a 1 MB error line.

/// The most characters of a user's value a message repeats.
pub const MAX_ECHO: usize = 80;

/// `s` with control characters escaped (`\n`, `\u{1b}`) and cut to [`MAX_ECHO`] characters,
/// saying how long it was.
///
/// ```
/// use attnlab_core::present::text::shorten;
/// assert_eq!(shorten("pi/2"), "pi/2");
/// assert_eq!(shorten("a\nb"), "a\\nb");
/// let long = "x".repeat(1000);
/// assert!(shorten(&long).ends_with("… (1000 characters)"));
/// assert!(shorten(&long).chars().count() < 120);
/// ```
pub fn shorten(s: &str) -> String {
    let total = s.chars().count();
    let mut out = String::new();
    // Counted as shown: an escaped control character (`\u{4}`) takes its escape's width, so
    // a value full of them is cut as short as a plain one (found by the GGUF fuzz target).
    let mut shown = 0;
    for (i, c) in s.chars().enumerate() {
        let piece: String = if c.is_control() {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        shown += piece.chars().count();
        if shown > MAX_ECHO {
            out.push_str(&format!("… ({total} characters)"));
            return out;
        }
        out.push_str(&piece);
        if i + 1 == MAX_ECHO && total > MAX_ECHO {
            out.push_str(&format!("… ({total} characters)"));
            return out;
        }
    }
    out
}

/// The most characters of a path a message repeats (the end, where the file's name is, is kept).
pub const MAX_PATH_ECHO: usize = 160;

/// A path for a one-line message: control characters escaped, and when longer than
/// [`MAX_PATH_ECHO`] characters, its end (the file's name) kept after a `…`.
///
/// ```
/// use attnlab_core::present::text::shorten_path;
/// use std::path::Path;
/// assert_eq!(shorten_path(Path::new("/tmp/a\nb.json")), "/tmp/a\\nb.json");
/// let long = format!("/{}/config.json", "d".repeat(500));
/// let s = shorten_path(Path::new(&long));
/// assert!(s.starts_with('…') && s.ends_with("/config.json") && s.chars().count() <= 161);
/// ```
pub fn shorten_path(p: &std::path::Path) -> String {
    let text = p.display().to_string();
    let mut escaped = String::new();
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    let total = escaped.chars().count();
    if total <= MAX_PATH_ECHO {
        return escaped;
    }
    let tail: String = escaped.chars().skip(total - MAX_PATH_ECHO).collect();
    format!("…{tail}")
}

/// The most characters of another library's error message a message repeats.
pub const MAX_REASON: usize = 160;

/// Another library's error message (a JSON, TOML, zip or safetensors parser's) for a one-line
/// message: control characters escaped, cut to [`MAX_REASON`] characters with a `…`. Those
/// messages may list every accepted variant or echo the input.
///
/// ```
/// use attnlab_core::present::text::clip;
/// assert_eq!(clip("EOF at line 1"), "EOF at line 1");
/// assert!(clip(&"x".repeat(500)).ends_with('…'));
/// assert_eq!(clip(&"x".repeat(500)).chars().count(), 161);
/// ```
pub fn clip(reason: &str) -> String {
    let mut out = String::new();
    for (i, c) in reason.chars().enumerate() {
        if i == MAX_REASON {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `n` `noun`s in words: `1 step`, `15 steps`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
