//! Go's `encoding/json` bytes (what kube-apiserver stores and kubectl compares), from serde_json values.
//!
//! Two differences from serde_json's compact output matter to clients that compare bytes
//! (kubectl's `rollout undo` compares a ControllerRevision's `data` with its own `json.Marshal`,
//! staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollback.go `daemonSetMatch`):
//! - Go's `json.Marshal` writes `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`, `\u003e`,
//!   `\u0026`, `\u2028`, `\u2029` (encoding/json `appendString` with `escapeHTML`);
//! - a Go `map[string]interface{}` is written with its keys sorted bytewise, whereas this crate's
//!   maps keep insertion order (serde_json's `preserve_order`): [`sorted`] reorders them.

use std::io;

use serde_json::{Map, Value, ser::Formatter};

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
    fn keys_are_sorted_bytewise_at_every_depth() {
        let value = json!({"spec": {"b": 1, "$patch": "replace", "A": [{"z": null, "a": true}]}, "a": 2});
        assert_eq!(
            to_string(&sorted(value)),
            r#"{"a":2,"spec":{"$patch":"replace","A":[{"a":true,"z":null}],"b":1}}"#
        );
    }
}
