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
    for c in s.chars().take(MAX_ECHO) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if total > MAX_ECHO {
        out.push_str(&format!("… ({total} characters)"));
    }
    out
}
