//! Go's `encoding/json` bytes (what kube-apiserver stores and kubectl compares), from serde_json
//! values, and its decoder's nesting limit.
//!
//! Two differences from serde_json's compact output matter to clients that compare bytes
//! (kubectl's `rollout undo` compares a ControllerRevision's `data` with its own `json.Marshal`,
//! staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollback.go `daemonSetMatch`):
//! - Go's `json.Marshal` writes `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`, `\u003e`,
//!   `\u0026`, `\u2028`, `\u2029` (encoding/json `appendString` with `escapeHTML`);
//! - a Go `map[string]interface{}` is written with its keys sorted bytewise, whereas this crate's
//!   maps keep insertion order (serde_json's `preserve_order`): [`sorted`] reorders them.

use std::io;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, ser::Formatter};

/// The deepest nesting of arrays and objects Go's JSON decoder reads: `maxNestingDepth` of
/// sigs.k8s.io/json `internal/golang/encoding/json/scanner.go` (kube-apiserver's decoder, a fork
/// of `encoding/json`, whose scanner has the same limit), "to prevent stack overflow". go-yaml v2
/// (sigs.k8s.io/yaml `goyaml.v2/scannerc.go` `max_flow_level`, `max_indents`) stops YAML at the
/// same depth.
pub const MAX_NESTING_DEPTH: usize = 10_000;

/// Why JSON could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// More than [`MAX_NESTING_DEPTH`] nested arrays and objects: scanner.go `pushParseState`
    /// fails on the bracket that opens one level too many, with a `SyntaxError` worded by
    /// `scanner.error`: `invalid character '{' exceeded max depth`.
    #[error("invalid character '{}' exceeded max depth", char::from(.0.bracket))]
    TooDeep(Overflow),
    /// Not JSON, or not of the expected shape (serde_json's words).
    #[error("{0}")]
    Syntax(#[from] serde_json::Error),
}

/// Where JSON text nests one level deeper than [`MAX_NESTING_DEPTH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// The bracket that opens the level: `{` or `[`.
    pub bracket: u8,
    /// Its byte offset in the text.
    pub offset: usize,
}

impl Overflow {
    /// The 1-based line of the bracket in `text`.
    pub fn line(&self, text: &[u8]) -> usize {
        text[..self.offset.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1
    }
}

/// Where the JSON text `bytes` opens level [`MAX_NESTING_DEPTH`] + 1, if it does: the scanner's
/// depth check, without recursion (strings are skipped, so a bracket inside one does not count;
/// malformed text is left to the parser).
pub fn nesting_overflow(bytes: &[u8]) -> Option<Overflow> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &byte) in bytes.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    return Some(Overflow { bracket: byte, offset });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Decodes client JSON as kube-apiserver's decoder would accept it: refused past
/// [`MAX_NESTING_DEPTH`] before anything recurses, then parsed without serde_json's own
/// 128-level limit (the threads that handle requests have the stack for this depth:
/// [`crate::THREAD_STACK_BYTES`]).
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    if let Some(overflow) = nesting_overflow(bytes) {
        return Err(DecodeError::TooDeep(overflow));
    }
    Ok(from_checked(bytes)?)
}

/// Parses JSON the simulator wrote itself (stored objects, whose depth was bounded when they
/// came in), without serde_json's 128-level limit.
pub fn from_checked<T: DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<T> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    deserializer.disable_recursion_limit();
    let value = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// The bracket that opens level [`MAX_NESTING_DEPTH`] + 1 of `value` as Go's `json.Marshal`
/// writes it (map keys sorted), if `value` nests that deep: what decoding the marshalled
/// value fails on. Walks without recursion, so any depth is safe.
pub fn value_overflow(value: &Value) -> Option<u8> {
    let mut pending: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, depth)) = pending.pop() {
        let bracket = match value {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| b.0.as_bytes().cmp(a.0.as_bytes()));
                pending.extend(entries.into_iter().map(|(_, child)| (child, depth + 1)));
                b'{'
            }
            Value::Array(items) => {
                pending.extend(items.iter().rev().map(|child| (child, depth + 1)));
                b'['
            }
            _ => continue,
        };
        if depth > MAX_NESTING_DEPTH {
            return Some(bracket);
        }
    }
    None
}

/// `value` as Go's `json.Marshal` writes a `map[string]interface{}` (keys sorted, HTML-safe),
/// built without recursion: for objects nested past what the stack is sized for.
pub fn marshal_deep(value: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value),
        Key(&'a str),
        Text(&'static str),
    }
    let mut out = String::new();
    let mut steps = vec![Step::Value(value)];
    while let Some(step) = steps.pop() {
        match step {
            Step::Text(text) => out.push_str(text),
            Step::Key(key) => {
                out.push_str(&to_string(&Value::String(key.to_string())));
                out.push(':');
            }
            Step::Value(Value::Object(map)) => {
                out.push('{');
                steps.push(Step::Text("}"));
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| b.0.as_bytes().cmp(a.0.as_bytes()));
                let last = entries.len().saturating_sub(1);
                for (index, (key, child)) in entries.into_iter().enumerate() {
                    steps.push(Step::Value(child));
                    steps.push(Step::Key(key));
                    if index != last {
                        steps.push(Step::Text(","));
                    }
                }
            }
            Step::Value(Value::Array(items)) => {
                out.push('[');
                steps.push(Step::Text("]"));
                for (index, child) in items.iter().enumerate().rev() {
                    steps.push(Step::Value(child));
                    if index != 0 {
                        steps.push(Step::Text(","));
                    }
                }
            }
            Step::Value(scalar) => out.push_str(&to_string(scalar)),
        }
    }
    out
}

/// Drops `value` without recursion (dropping a `Value` recurses once per level).
pub fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, child)| child)),
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
}

/// How deeply arrays and objects nest in `value` (a scalar: 0), counted without recursion.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, depth)) = pending.pop() {
        match value {
            Value::Object(map) => pending.extend(map.values().map(|child| (child, depth + 1))),
            Value::Array(items) => pending.extend(items.iter().map(|child| (child, depth + 1))),
            _ => continue,
        }
        deepest = deepest.max(depth);
    }
    deepest
}

/// `value` as Go's `json.Marshal` writes it: compact, HTML-escaped, keys in `value`'s order.
pub fn to_string(value: &Value) -> String {
    let mut bytes = Vec::with_capacity(256);
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, GoFormatter);
    // Serializing a `Value` into a `Vec` cannot fail: its map keys are strings and the writer
    // never errors.
    if serde::Serialize::serialize(value, &mut serializer).is_err() {
        return value.to_string();
    }
    // Only valid UTF-8 is written: the input strings plus ASCII escapes.
    String::from_utf8(bytes).unwrap_or_else(|_| value.to_string())
}

/// `value` with every object's keys in bytewise order, as Go writes a `map[string]interface{}`.
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            Value::Object(entries.into_iter().map(|(key, value)| (key, sorted(value))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// serde_json's compact formatter with Go's HTML-safe string escaping.
struct GoFormatter;

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let bytes = fragment.as_bytes();
        let mut start = 0;
        let mut index = 0;
        while index < bytes.len() {
            let (escape, width): (&[u8], usize) = match bytes[index] {
                b'<' => (b"\\u003c", 1),
                b'>' => (b"\\u003e", 1),
                b'&' => (b"\\u0026", 1),
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
                0xE2 if bytes.get(index + 1) == Some(&0x80) && bytes.get(index + 2) == Some(&0xA8) => {
                    (b"\\u2028", 3)
                }
                0xE2 if bytes.get(index + 1) == Some(&0x80) && bytes.get(index + 2) == Some(&0xA9) => {
                    (b"\\u2029", 3)
                }
                _ => {
                    index += 1;
                    continue;
                }
            };
            writer.write_all(&bytes[start..index])?;
            writer.write_all(escape)?;
            index += width;
            start = index;
        }
        writer.write_all(&bytes[start..])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn html_characters_and_line_separators_are_escaped_as_go_does() {
        let value = json!({"cmd": "a && b <x> \u{2028}\u{2029} é \n \"q\""});
        assert_eq!(to_string(&value), r#"{"cmd":"a \u0026\u0026 b \u003cx\u003e \u2028\u2029 é \n \"q\""}"#);
    }

    #[test]
    fn nesting_is_counted_as_gos_scanner_counts_it() {
        let at_limit = format!("{}1{}", "[".repeat(MAX_NESTING_DEPTH), "]".repeat(MAX_NESTING_DEPTH));
        assert_eq!(nesting_overflow(at_limit.as_bytes()), None);
        let past = format!(r#"{{"a":"[{{\"[",{}}}"#, "[".repeat(MAX_NESTING_DEPTH));
        let overflow = nesting_overflow(past.as_bytes()).expect("one level too many");
        // Brackets inside strings (and after an escaped quote) do not count.
        assert_eq!((overflow.bracket, overflow.offset), (b'[', 12 + MAX_NESTING_DEPTH));
        assert_eq!(overflow.line(past.as_bytes()), 1);
        let error = from_slice::<Value>(past.as_bytes()).unwrap_err();
        assert_eq!(error.to_string(), "invalid character '[' exceeded max depth");
        // Deeper than serde_json's own limit of 128, within Go's.
        let deep: Value = from_slice(format!("{}{}", "[".repeat(200), "]".repeat(200)).as_bytes()).unwrap();
        assert_eq!(depth(&deep), 200);
    }

    #[test]
    fn deep_values_are_measured_marshalled_and_dropped_without_recursion() {
        let small = json!({"b": [1, {"d": "<x>", "c": null}], "a": {}});
        assert_eq!(marshal_deep(&small), to_string(&sorted(small.clone())));
        assert_eq!(value_overflow(&small), None);
        // Far deeper than any stack: built, measured, written and dropped in loops (built by
        // hand: `json!` would copy the inner value through `to_value`, recursing).
        let mut deep = json!(1);
        for level in 0..200_000 {
            deep = if level % 2 == 0 {
                Value::Array(vec![deep])
            } else {
                Value::Object(Map::from_iter([("k".to_string(), deep)]))
            };
        }
        assert_eq!(depth(&deep), 200_000);
        assert_eq!(value_overflow(&deep), Some(b'{'));
        assert_eq!(marshal_deep(&deep).len(), 200_000 / 2 * 2 + 200_000 / 2 * 6 + 1);
        dismantle(deep);
    }

    #[test]
    fn keys_are_sorted_bytewise_at_every_depth() {
        let value = json!({"spec": {"b": 1, "$patch": "replace", "A": [{"z": null, "a": true}]}, "a": 2});
        assert_eq!(
            to_string(&sorted(value)),
            r#"{"a":2,"spec":{"$patch":"replace","A":[{"a":true,"z":null}],"b":1}}"#
        );
    }
}
