//! Go's `%v` and `%#v` of a custom resource's values as kube-apiserver holds them (int64, float64, string, map, slice).
//!
//! A custom resource is decoded into `map[string]interface{}` with integral numbers as `int64`
//! and others as `float64` (apimachinery `pkg/util/json` `Unmarshal`); `field.Error.ErrorBody`
//! prints a bad value with `%v` for numbers and bools, `%q` for strings and `%#v` otherwise.

use serde_json::Value;

/// Go's `%v` of a float64: `%g` with the shortest digits, in `e` form when the exponent is below
/// -4 or at least 6 (strconv `ftoa.go`: "if precision was the shortest possible, use precision 6
/// for this decision").
pub fn float(number: f64) -> String {
    if number.is_nan() {
        return "NaN".into();
    }
    if number.is_infinite() {
        return if number > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    let scientific = format!("{number:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if number != 0.0 && !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        number.to_string()
    }
}

/// A JSON number as the int64 or float64 Kubernetes decodes it to, printed with `%v`.
pub fn number(n: &serde_json::Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => float(n.as_f64().unwrap_or_default()),
    }
}

/// The bad value as `field.Error.ErrorBody` prints it.
pub fn bad_value(value: &Value) -> String {
    match value {
        Value::Null => "\"null\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        other => sharp_v(other),
    }
}

/// Go's `%q` of a string (Rust's debug quoting agrees for the characters labs use).
pub fn quote(text: &str) -> String {
    format!("{text:?}")
}

/// Go's `%#v` of a decoded value.
pub fn sharp_v(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Array(items) => {
            format!("[]interface {{}}{{{}}}", items.iter().map(sharp_v).collect::<Vec<_>>().join(", "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0)); // Go prints maps sorted by key
            let parts: Vec<String> =
                entries.iter().map(|(k, v)| format!("{}:{}", quote(k), sharp_v(v))).collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(bad_value(&json!(-1)), "-1");
        assert_eq!(bad_value(&json!(1.5)), "1.5");
        assert_eq!(bad_value(&json!("a")), "\"a\"");
        assert_eq!(bad_value(&json!(null)), "\"null\"");
        assert_eq!(
            bad_value(&json!({"b": [1, "x"], "a": 2.5})),
            "map[string]interface {}{\"a\":2.5, \"b\":[]interface {}{1, \"x\"}}"
        );
        assert_eq!(float(1_000_000.0), "1e+06");
        assert_eq!(float(100_000.0), "100000");
        assert_eq!(float(0.00001), "1e-05");
    }
}
