//! Field paths into objects: `spec.template.spec.containers[0].image`, `status.allocatable["nvidia.com/gpu"]`.

use std::fmt;

use serde_json::Value;

use crate::{
    english_display,
    i18n::{Localized, Message},
    msg,
};

/// Errors from parsing a field path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The path does not follow the syntax.
    Syntax {
        /// The path as written.
        path: String,
        /// What is wrong.
        reason: Syntax,
    },
}

/// What is wrong with a path's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// A `[` without its `]`.
    Unclosed,
    /// Two dots in a row, a leading dot, or `[""]`.
    EmptyKey,
    /// `[…]` holds neither a number nor a quoted key.
    BadBracket,
    /// The path ends in a dot.
    TrailingDot,
    /// A key right after `]`, without a dot.
    DotExpected,
    /// Nothing at all.
    EmptyPath,
}

impl Localized for Error {
    fn message(&self) -> Message {
        let Error::Syntax { path, reason } = self;
        let reason = match reason {
            Syntax::Unclosed => msg!("path-syntax-unclosed"),
            Syntax::EmptyKey => msg!("path-syntax-empty-key"),
            Syntax::BadBracket => msg!("path-syntax-bad-bracket"),
            Syntax::TrailingDot => msg!("path-syntax-trailing-dot"),
            Syntax::DotExpected => msg!("path-syntax-dot-expected"),
            Syntax::EmptyPath => msg!("path-syntax-empty-path"),
        };
        msg!("path-invalid", path = format!("{path:?}"), reason = reason)
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// A map key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// A parsed field path.
///
/// ```
/// use lab_runner::grade::path::FieldPath;
/// let path: FieldPath = r#"status.allocatable["nvidia.com/gpu"]"#.parse().unwrap();
/// assert_eq!(path.to_string(), "status.allocatable.nvidia.com/gpu");
/// let node = serde_json::json!({"status": {"allocatable": {"nvidia.com/gpu": "4"}}});
/// assert_eq!(path.get(&node), Some(&serde_json::json!("4")));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath {
    segments: Vec<Segment>,
}

impl FieldPath {
    /// The empty path (the object itself).
    pub fn root() -> FieldPath {
        FieldPath::default()
    }

    /// The steps of the path.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// This path extended by a key.
    pub fn key(&self, key: &str) -> FieldPath {
        let mut segments = self.segments.clone();
        segments.push(Segment::Key(key.to_string()));
        FieldPath { segments }
    }

    /// This path extended by an index.
    pub fn index(&self, index: usize) -> FieldPath {
        let mut segments = self.segments.clone();
        segments.push(Segment::Index(index));
        FieldPath { segments }
    }

    /// The same path without list indices: how list semantics and quantity paths are declared.
    pub fn without_indices(&self) -> FieldPath {
        FieldPath {
            segments: self.segments.iter().filter(|s| matches!(s, Segment::Key(_))).cloned().collect(),
        }
    }

    /// True when some key of the path is one of `keys`.
    pub fn has_key_in(&self, keys: &[&str]) -> bool {
        self.segments.iter().any(|s| matches!(s, Segment::Key(k) if keys.contains(&k.as_str())))
    }

    /// The value at this path, if every step exists.
    pub fn get<'a>(&self, mut value: &'a Value) -> Option<&'a Value> {
        for segment in &self.segments {
            value = match segment {
                Segment::Key(key) => value.as_object()?.get(key)?,
                Segment::Index(index) => value.as_array()?.get(*index)?,
            };
        }
        Some(value)
    }
}

impl std::str::FromStr for FieldPath {
    type Err = Error;

    fn from_str(text: &str) -> Result<FieldPath> {
        let syntax = |reason| Error::Syntax { path: text.to_string(), reason };
        let mut segments = Vec::new();
        let mut rest = text;
        let mut expect_key = true;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let close = after.find(']').ok_or_else(|| syntax(Syntax::Unclosed))?;
                let inner = &after[..close];
                if let Some(quoted) = inner.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                    if quoted.is_empty() {
                        return Err(syntax(Syntax::EmptyKey));
                    }
                    segments.push(Segment::Key(quoted.to_string()));
                } else {
                    let index = inner.parse().map_err(|_| syntax(Syntax::BadBracket))?;
                    segments.push(Segment::Index(index));
                }
                rest = &after[close + 1..];
                expect_key = false;
            } else if let Some(after) = rest.strip_prefix('.') {
                if expect_key {
                    return Err(syntax(Syntax::EmptyKey));
                }
                rest = after;
                expect_key = true;
                if rest.is_empty() {
                    return Err(syntax(Syntax::TrailingDot));
                }
            } else {
                if !expect_key {
                    return Err(syntax(Syntax::DotExpected));
                }
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                segments.push(Segment::Key(rest[..end].to_string()));
                rest = &rest[end..];
                expect_key = false;
            }
        }
        if segments.is_empty() {
            return Err(syntax(Syntax::EmptyPath));
        }
        Ok(FieldPath { segments })
    }
}

impl fmt::Display for FieldPath {
    /// Keys joined by dots, indices in brackets: readable evidence, not re-parseable when keys
    /// hold dots (`status.allocatable.nvidia.com/gpu`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => write!(f, "{key}")?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> FieldPath {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_keys_indices_and_quoted_keys() {
        let path = p(r#"spec.containers[0].resources.limits["nvidia.com/gpu"]"#);
        assert_eq!(
            path.segments(),
            &[
                Segment::Key("spec".into()),
                Segment::Key("containers".into()),
                Segment::Index(0),
                Segment::Key("resources".into()),
                Segment::Key("limits".into()),
                Segment::Key("nvidia.com/gpu".into()),
            ]
        );
        assert_eq!(path.to_string(), "spec.containers[0].resources.limits.nvidia.com/gpu");
        assert_eq!(path.without_indices(), p(r#"spec.containers.resources.limits["nvidia.com/gpu"]"#));
        assert_eq!(p(r#"["a.b"].c"#).segments().len(), 2);
    }

    #[test]
    fn rejects_bad_syntax() {
        for bad in ["", ".a", "a.", "a..b", "a[", "a[x]", "a[0]b", r#"a[""]"#] {
            assert!(bad.parse::<FieldPath>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn gets_values() {
        let value = serde_json::json!({"a": [{"b": 1}, {"b": 2}]});
        assert_eq!(p("a[1].b").get(&value), Some(&serde_json::json!(2)));
        assert_eq!(p("a[2].b").get(&value), None);
        assert_eq!(p("a.b").get(&value), None);
    }
}
