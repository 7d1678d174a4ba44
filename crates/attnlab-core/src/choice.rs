//! Closed sets of named options (mask, layer, positions, generator, …): one name per value,
//! used by every front end (the CLI's option parsers, the web API's JSON, Python keywords).

use crate::{Error, Result};

/// An enum whose values have one canonical lower-case name each.
///
/// Front ends list [`Choice::ALL`] as the accepted values and parse with [`Choice::parse`];
/// serde uses the same names, so a request in JSON spells them exactly as the CLI does.
pub trait Choice: Copy + Sized + PartialEq + 'static {
    /// What the value chooses (the option it belongs to), for error messages.
    const WHAT: &'static str;
    /// Every value, in the order help texts list them.
    const ALL: &'static [Self];

    /// The canonical name.
    fn name(self) -> &'static str;

    /// Other spellings accepted on input (e.g. `bfloat16` for `bf16`).
    fn aliases(self) -> &'static [&'static str] {
        &[]
    }

    /// Parses a canonical name or an alias (ASCII case-insensitive).
    ///
    /// # Errors
    /// An [`crate::ErrorKind::InvalidValue`] error naming the value and listing the accepted names.
    fn parse(s: &str) -> Result<Self> {
        let t = s.trim();
        Self::ALL
            .iter()
            .copied()
            .find(|c| {
                c.name().eq_ignore_ascii_case(t)
                    || c.aliases().iter().any(|a| a.eq_ignore_ascii_case(t))
            })
            .ok_or_else(|| Error::invalid(Self::WHAT, s, Self::accepted()))
    }

    /// The accepted names joined for a message: `none, causal`.
    fn accepted() -> String {
        Self::ALL
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Defines a [`Choice`] enum with serde names equal to its canonical names.
///
/// ```
/// attnlab_core::choice! {
///     /// A colour.
///     pub enum Colour("colour") {
///         /// Red.
///         Red = "red",
///         /// Blue.
///         Blue = "blue",
///     }
/// }
/// use attnlab_core::choice::Choice;
/// assert_eq!(Colour::parse("Blue").unwrap(), Colour::Blue);
/// assert_eq!(Colour::Red.to_string(), "red");
/// assert!(Colour::parse("green").unwrap_err().to_string().contains("red, blue"));
/// ```
#[macro_export]
macro_rules! choice {
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $crate::choice::Choice for $name {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = &[$($name::$variant),+];
            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl $name {
            /// The canonical name (as the CLI, the JSON and Python spell it).
            pub fn name(self) -> &'static str {
                <Self as $crate::choice::Choice>::name(self)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::Error;
            fn from_str(s: &str) -> $crate::Result<Self> {
                <Self as $crate::choice::Choice>::parse(s)
            }
        }
    };
}
