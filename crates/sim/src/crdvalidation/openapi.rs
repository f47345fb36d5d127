//! OpenAPI v3 value validation of a custom resource against its structural schema, in kube-openapi's words.
//!
//! kube-openapi `pkg/validation/validate` (type, string, format, number, slice, enum and object
//! validators) with each error turned into a `field.Error` as apiextensions-apiserver
//! `pkg/apiserver/validation/validation.go` `kubeOpenAPIResultToFieldErrors` does: `Required`,
//! `NotSupported` (enum), `TooLong` (maxLength), `TooMany` (maxItems, maxProperties),
//! `TypeInvalid` (type and format), `Invalid` with kube-openapi's message otherwise
//! (`spec.replicas in body should be greater than or equal to 0`). Then embedded resources
//! (`schema/objectmeta/validation.go`) and `x-kubernetes-list-type` uniqueness
//! (`schema/listtype/validation.go`). Not checked: `allOf`/`anyOf`/`oneOf`/`not` and the formats
//! beyond those [`format_ok`] knows.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{FieldError, Reason, gofmt};

/// Every schema error in `object` (apiVersion, kind and metadata are the server's and skipped).
pub fn validate(schema: &Value, object: &Value) -> Vec<FieldError> {
    let mut walk = Walk { errors: Vec::new() };
    if let Some(fields) = object.as_object() {
        walk.required(schema, fields, "");
        for (key, value) in fields {
            if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(property) = schema["properties"].get(key) {
                walk.value(property, value, key);
            }
        }
        walk.min_max_properties(schema, fields, "");
    }
    walk.errors
}

struct Walk {
    errors: Vec<FieldError>,
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// The JSON type kube-openapi sees: integral numbers are integers.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Walk {
    fn push(&mut self, reason: Reason, field: &str, value: Option<String>, detail: String) {
        self.errors.push(FieldError::new(reason, field, value, detail));
    }

    fn invalid(&mut self, field: &str, value: &Value, detail: String) {
        self.push(Reason::Invalid, field, Some(gofmt::bad_value(value)), detail);
    }

    fn value(&mut self, schema: &Value, value: &Value, path: &str) {
        if !self.type_fits(schema, value, path) {
            return;
        }
        if let Some(allowed) = schema["enum"].as_array()
            && !allowed.contains(value)
        {
            let listed: Vec<String> = allowed
                .iter()
                .map(|v| {
                    gofmt::quote(&v.as_str().map_or_else(|| crate::gojson::to_string(v), str::to_string))
                })
                .collect();
            let detail = format!("supported values: {}", listed.join(", "));
            self.push(Reason::NotSupported, path, Some(gofmt::bad_value(value)), detail);
        }
        match value {
            Value::String(text) => self.string(schema, text, value, path),
            Value::Number(number) => self.number(schema, number, value, path),
            Value::Array(items) => self.array(schema, items, path),
            Value::Object(fields) => self.object(schema, fields, path),
            _ => {}
        }
    }

    /// kube-openapi `type.go`: `<path> in body must be of type <type>: "<actual>"`, reported with
    /// the actual type's name as the bad value.
    fn type_fits(&mut self, schema: &Value, value: &Value, path: &str) -> bool {
        let actual = json_type(value);
        if value.is_null() {
            if schema["nullable"] == true
                || schema["x-kubernetes-preserve-unknown-fields"] == true && schema["type"].is_null()
            {
                return false; // nothing more to check
            }
            if schema["type"].is_null() && schema["x-kubernetes-int-or-string"] != true {
                return false;
            }
        }
        let int_or_string = schema["x-kubernetes-int-or-string"] == true;
        let expected = schema["type"].as_str().unwrap_or("");
        let fits = if int_or_string {
            matches!(actual, "integer" | "string")
        } else {
            match expected {
                "" => true,
                "number" => matches!(actual, "integer" | "number"),
                other => other == actual,
            }
        };
        if !fits {
            let wanted = if int_or_string { "integer,string" } else { expected };
            let detail = format!("{path} in body must be of type {wanted}: {actual:?}");
            self.push(Reason::TypeInvalid, path, Some(format!("{actual:?}")), detail);
        }
        fits
    }

    fn string(&mut self, schema: &Value, text: &str, value: &Value, path: &str) {
        let length = text.chars().count() as u64;
        if let Some(max) = schema["maxLength"].as_u64()
            && length > max
        {
            // field.TooLong (1.33): the value is not shown.
            let unit = if max == 1 { "byte" } else { "bytes" };
            self.push(Reason::TooLong, path, None, format!("may not be more than {max} {unit}"));
        }
        if let Some(min) = schema["minLength"].as_u64()
            && length < min
        {
            self.invalid(path, value, format!("{path} in body should be at least {min} chars long"));
        }
        if let Some(pattern) = schema["pattern"].as_str()
            && regex::Regex::new(pattern).is_ok_and(|re| !re.is_match(text))
        {
            self.invalid(path, value, format!("{path} in body should match '{pattern}'"));
        }
        if let Some(format) = schema["format"].as_str()
            && !format_ok(format, text)
        {
            let detail = format!("{path} in body must be of type {format}: {}", gofmt::quote(text));
            self.push(Reason::TypeInvalid, path, Some(gofmt::quote(text)), detail);
        }
    }

    fn number(&mut self, schema: &Value, number: &serde_json::Number, value: &Value, path: &str) {
        let data = number.as_f64().unwrap_or_default();
        // An integer value is compared with the bound as an int64, printed without exponent
        // (kube-openapi `MaximumNativeType`); a float as a float64 (`%v`).
        let bound = |limit: f64| {
            if number.is_i64() && limit.fract() == 0.0 && limit.abs() < 9.2e18 {
                (limit as i64).to_string()
            } else {
                gofmt::float(limit)
            }
        };
        if let Some(factor) = schema["multipleOf"].as_f64()
            && factor > 0.0
            && (data / factor).fract() != 0.0
        {
            self.invalid(path, value, format!("{path} in body should be a multiple of {}", bound(factor)));
        }
        if let Some(max) = schema["maximum"].as_f64() {
            let exclusive = schema["exclusiveMaximum"] == true;
            if data > max || exclusive && data == max {
                let words = if exclusive { "less than" } else { "less than or equal to" };
                self.invalid(path, value, format!("{path} in body should be {words} {}", bound(max)));
            }
        }
        if let Some(min) = schema["minimum"].as_f64() {
            let exclusive = schema["exclusiveMinimum"] == true;
            if data < min || exclusive && data == min {
                let words = if exclusive { "greater than" } else { "greater than or equal to" };
                self.invalid(path, value, format!("{path} in body should be {words} {}", bound(min)));
            }
        }
    }

    fn array(&mut self, schema: &Value, items: &[Value], path: &str) {
        let count = items.len() as u64;
        if let Some(min) = schema["minItems"].as_u64()
            && count < min
        {
            self.invalid(
                path,
                &Value::from(count),
                format!("{path} in body should have at least {min} items"),
            );
        }
        if let Some(max) = schema["maxItems"].as_u64()
            && count > max
        {
            self.push(Reason::TooMany, path, Some(count.to_string()), too_many(max));
        }
        if schema["uniqueItems"] == true && has_duplicates(items) {
            self.invalid(path, &Value::from(""), format!("{path} in body shouldn't contain duplicates"));
        }
        if schema["items"].is_object() {
            for (index, item) in items.iter().enumerate() {
                self.value(&schema["items"], item, &format!("{path}[{index}]"));
            }
        }
        match schema["x-kubernetes-list-type"].as_str() {
            Some("set") => self.list_set(items, path),
            Some("map") => self.list_map(schema, items, path),
            _ => {}
        }
    }

    fn object(&mut self, schema: &Value, fields: &Map<String, Value>, path: &str) {
        self.required(schema, fields, path);
        self.min_max_properties(schema, fields, path);
        let properties = schema["properties"].as_object();
        for (key, field) in fields {
            let child = child(path, key);
            match properties.and_then(|p| p.get(key)) {
                Some(property) => self.value(property, field, &child),
                None if schema["additionalProperties"].is_object() => {
                    self.value(&schema["additionalProperties"], field, &child);
                }
                None => {}
            }
        }
        if schema["x-kubernetes-embedded-resource"] == true {
            self.embedded(fields, path);
        }
    }

    fn required(&mut self, schema: &Value, fields: &Map<String, Value>, path: &str) {
        for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                self.push(Reason::Required, &child(path, name), None, String::new());
            }
        }
    }

    fn min_max_properties(&mut self, schema: &Value, fields: &Map<String, Value>, path: &str) {
        let count = fields.len() as u64;
        let field = if path.is_empty() { "<nil>" } else { path };
        if let Some(max) = schema["maxProperties"].as_u64()
            && count > max
        {
            self.push(Reason::TooMany, field, Some(count.to_string()), too_many(max));
        }
        if let Some(min) = schema["minProperties"].as_u64()
            && count < min
        {
            let name = if path.is_empty() { "." } else { path };
            self.invalid(
                field,
                &Value::from(count),
                format!("{name} in body should have at least {min} properties"),
            );
        }
    }

    /// `schema/objectmeta/validation.go` `Validate`: an embedded resource names its apiVersion
    /// and kind.
    fn embedded(&mut self, fields: &Map<String, Value>, path: &str) {
        for key in ["apiVersion", "kind"] {
            match fields.get(key) {
                None => self.push(Reason::Required, &child(path, key), None, "must not be empty".into()),
                Some(Value::String(_)) => {}
                Some(other) => self.invalid(&child(path, key), other, "must be a string".into()),
            }
        }
    }

    /// `listtype/validation.go` `validateListSet`: the second appearance of each repeated item.
    fn list_set(&mut self, items: &[Value], path: &str) {
        for index in first_repeats(items.iter().map(crate::gojson::to_string)) {
            let value = gofmt::bad_value(&items[index]);
            self.push(Reason::Duplicate, &format!("{path}[{index}]"), Some(value), String::new());
        }
    }

    /// `validateListMap`: items are objects, unique by their `x-kubernetes-list-map-keys`.
    fn list_map(&mut self, schema: &Value, items: &[Value], path: &str) {
        if let Some(index) = items.iter().position(|item| !item.is_object() && !item.is_null()) {
            let detail = "must be an object for an array of list-type map".to_string();
            self.invalid(&format!("{path}[{index}]"), &items[index], detail);
            return;
        }
        let key_names = list_map_keys(schema);
        let keys: Vec<Value> = items
            .iter()
            .map(|item| {
                let mut key = Map::new();
                for name in &key_names {
                    if let Some(value) = item.get(name) {
                        key.insert((*name).to_string(), value.clone());
                    }
                }
                Value::Object(key)
            })
            .collect();
        for index in first_repeats(keys.iter().map(crate::gojson::to_string)) {
            let value = gofmt::sharp_v(&keys[index]);
            self.push(Reason::Duplicate, &format!("{path}[{index}]"), Some(value), String::new());
        }
    }
}

/// A `map` list's `x-kubernetes-list-map-keys`.
pub(super) fn list_map_keys(schema: &Value) -> Vec<&str> {
    schema["x-kubernetes-list-map-keys"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// `field.TooMany`'s detail (1.33: "item" for one).
fn too_many(max: u64) -> String {
    format!("must have at most {max} {}", if max == 1 { "item" } else { "items" })
}

/// The index of the second appearance of each value that appears more than once.
fn first_repeats(encoded: impl Iterator<Item = String>) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut repeats = Vec::new();
    for (index, text) in encoded.enumerate() {
        let times = seen.entry(text).or_insert(0);
        *times += 1;
        if *times == 2 {
            repeats.push(index);
        }
    }
    repeats
}

fn has_duplicates(items: &[Value]) -> bool {
    !first_repeats(items.iter().map(crate::gojson::to_string)).is_empty()
}

/// The string formats kube-openapi's default registry checks (`strfmt.Default`) that labs meet;
/// any other format passes.
fn format_ok(format: &str, text: &str) -> bool {
    match format {
        "date-time" => text.parse::<k8s_openapi::jiff::Timestamp>().is_ok(),
        "date" => text.len() == 10 && text.parse::<k8s_openapi::jiff::civil::Date>().is_ok(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => uuid_ok(format, text),
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => text.split_once('/').is_some_and(|(ip, bits)| {
            let max = if ip.contains(':') { 128 } else { 32 };
            ip.parse::<std::net::IpAddr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= max)
        }),
        "mac" => {
            let parts: Vec<&str> = text.split([':', '-']).collect();
            matches!(parts.len(), 6 | 8 | 20)
                && parts.iter().all(|p| p.len() == 2 && u8::from_str_radix(p, 16).is_ok())
        }
        "hostname" => {
            text.len() <= 255
                && text.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                })
        }
        "byte" => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(text).is_ok()
        }
        "email" => {
            text.split_once('@').is_some_and(|(user, domain)| !user.is_empty() && domain.contains('.'))
        }
        _ => true,
    }
}

fn uuid_ok(format: &str, text: &str) -> bool {
    let Ok(parsed) = uuid::Uuid::parse_str(text) else { return false };
    text.len() == 36
        && match format {
            "uuid3" => parsed.get_version_num() == 3,
            "uuid4" => parsed.get_version_num() == 4,
            "uuid5" => parsed.get_version_num() == 5,
            _ => true,
        }
}
