//! Custom resources: the strategy of every type a CRD serves (apiextensions-apiserver
//! `pkg/registry/customresource`): generation, pruning, schema validation and printer columns.
//!
//! Two parts. [`CUSTOM_RESOURCES`] is what the generic registry asks of every custom resource
//! (`kinds::strategy` hands it out for a resource outside the built-in API groups): a generation
//! that follows everything but `metadata` and `status`, no quantity decoding. [`CustomResource`]
//! is one served version of one CRD — its schema and printer columns — which the server builds
//! from the stored CRD before a write's transaction (`server::crd::custom_resource`; the store
//! lock is not re-entrant) and calls as the body is decoded: [`CustomResource::admit`] prunes
//! unknown fields (or refuses them under `fieldValidation=Strict`), then runs
//! [`CustomResource::validate`], the hook for the schema's value validation
//! (apiextensions-apiserver pkg/apiserver/validation, pkg/apiserver/schema/pruning/algorithm.go)
//! and its CEL rules, with the stored object as `old` on an update or a patch. Printed with the
//! version's `additionalPrinterColumns` (pkg/registry/customresource/tableconvertor).

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::sim::kinds::{
    Strategy,
    field::{Cause, invalid_message},
    printer::{NAME_DOC, human_duration},
};

/// What every custom resource shares: a generation that follows everything but `metadata` and
/// `status`, and no quantity decoding (its schema, not a Go type, says what a field is).
#[derive(Debug)]
pub struct CustomResources;

/// The strategy of custom resources in the generic registry.
pub static CUSTOM_RESOURCES: CustomResources = CustomResources;

impl Strategy for CustomResources {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// `customResourceStrategy.PrepareForUpdate`: a change outside `metadata` and `status` bumps
    /// the generation.
    fn generation_relevant(&self, object: &Value) -> Value {
        let mut rest = object.as_object().cloned().unwrap_or_default();
        rest.remove("metadata");
        rest.remove("status");
        Value::Object(rest)
    }

    fn typed_quantities(&self) -> bool {
        false
    }
}

/// Why a custom resource is refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// It does not match its CRD's schema (422 Invalid).
    #[error("{message}")]
    Invalid {
        /// Upstream's aggregate message.
        message: String,
        /// The individual causes.
        causes: Vec<Cause>,
        /// The kind's group.
        group: String,
        /// The kind.
        kind: String,
        /// The object's name.
        name: String,
    },
    /// `fieldValidation=Strict` and the object has fields the schema does not declare (400).
    #[error("{0}")]
    Strict(String),
}

/// One served version of a CRD, as its custom resources are admitted and printed.
#[derive(Debug, Clone)]
pub struct CustomResource {
    group: String,
    version: String,
    kind: String,
    /// The version's `schema.openAPIV3Schema` (`null` when it has none).
    schema: Value,
    /// The version's `additionalPrinterColumns`.
    columns: Vec<Value>,
}

impl CustomResource {
    /// The custom resources of `group`/`version`/`kind`, served by `crd_version` (one entry of
    /// the CRD's `spec.versions`).
    pub fn new(group: &str, version: &str, kind: &str, crd_version: &Value) -> CustomResource {
        CustomResource {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            schema: crd_version["schema"]["openAPIV3Schema"].clone(),
            columns: crd_version["additionalPrinterColumns"].as_array().cloned().unwrap_or_default(),
        }
    }

    /// Whether the version has a schema to prune and validate against.
    pub fn has_schema(&self) -> bool {
        self.schema.is_object()
    }

    /// Prunes and validates `object` before it is stored (`old`: the stored object on update);
    /// a version without a schema admits anything. Unknown fields are dropped, or refused when
    /// `strict` (`fieldValidation=Strict`).
    pub fn admit(&self, object: &mut Value, old: Option<&Value>, strict: bool) -> Result<(), Error> {
        let schema = &self.schema;
        if !schema.is_object() {
            return Ok(());
        }
        let mut check = Check::default();
        if let Some(fields) = object.as_object_mut() {
            for (key, value) in fields.iter() {
                // apiVersion, kind and metadata are the server's, never pruned (pruning/algorithm.go).
                if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                match schema["properties"].get(key) {
                    Some(property) => check.walk(property, value, key),
                    None if preserves(schema) => {}
                    None => check.unknown.push(key.clone()),
                }
            }
            if !preserves(schema) {
                let unknown = check.unknown.iter().filter(|p| !p.contains('.') && !p.contains('[')).cloned();
                for key in unknown.collect::<Vec<_>>() {
                    fields.remove(&key);
                }
            }
        }
        if strict && !check.unknown.is_empty() {
            let problems: Vec<String> =
                check.unknown.iter().map(|p| format!("unknown field \"{p}\"")).collect();
            return Err(Error::Strict(format!(
                "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
                self.kind,
                self.version,
                self.kind,
                problems.join(", ")
            )));
        }
        prune(schema, object, true);
        let causes = self.validate(object, old);
        if causes.is_empty() {
            return Ok(());
        }
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
        Err(Error::Invalid {
            message: invalid_message(&self.group, &self.kind, &name, &causes),
            causes,
            group: self.group.clone(),
            kind: self.kind.clone(),
            name,
        })
    }

    /// The schema's causes against `object`, pruned (`old`: the stored object on update, for
    /// transition rules): the value types, `enum` and `required` of the structural schema. The
    /// hook for the rest of the schema's value validation and its `x-kubernetes-validations`.
    pub fn validate(&self, object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        let schema = &self.schema;
        let mut check = Check::default();
        let Some(fields) = object.as_object() else { return check.causes };
        for (key, value) in fields {
            if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(property) = schema["properties"].get(key) {
                check.walk(property, value, key);
            }
        }
        for required in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !fields.contains_key(required) {
                check.required(required);
            }
        }
        check.causes
    }

    /// A `Table` of `objects`: NAME and the version's printer columns, or NAME and AGE when it
    /// declares none.
    pub fn table(&self, objects: &[Value], resource_version: &str, now: Timestamp) -> Value {
        let columns: Vec<Value> = if self.columns.is_empty() {
            vec![json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})]
        } else {
            self.columns.clone()
        };
        let mut definitions = vec![
            json!({"name": "Name", "type": "string", "format": "name", "priority": 0, "description": NAME_DOC}),
        ];
        for column in &columns {
            definitions.push(json!({
                "name": column["name"], "type": column["type"], "format": column["format"].as_str().unwrap_or_default(),
                "description": column["description"].as_str().unwrap_or_default(),
                "priority": column["priority"].as_i64().unwrap_or(0),
            }));
        }
        let rows: Vec<Value> = objects
            .iter()
            .map(|object| {
                let mut cells = vec![object["metadata"]["name"].clone()];
                for column in &columns {
                    cells.push(cell(column, object, now));
                }
                json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                       "metadata": object["metadata"]}})
            })
            .collect();
        json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version},
               "columnDefinitions": definitions, "rows": rows})
    }
}

fn preserves(schema: &Value) -> bool {
    schema["x-kubernetes-preserve-unknown-fields"] == true
}

/// Drops the fields `schema` does not declare (below the root; the root is handled by
/// [`admit`]).
fn prune(schema: &Value, value: &mut Value, root: bool) {
    match value {
        Value::Object(fields) => {
            if let Some(properties) = schema["properties"].as_object() {
                if !root && !preserves(schema) {
                    fields.retain(|key, _| properties.contains_key(key));
                }
                for (key, field) in fields.iter_mut() {
                    if root && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    if let Some(property) = properties.get(key) {
                        prune(property, field, false);
                    }
                }
            } else if schema["additionalProperties"].is_object() {
                for field in fields.values_mut() {
                    prune(&schema["additionalProperties"], field, false);
                }
            } else if !root && !preserves(schema) && schema["additionalProperties"] != true {
                fields.clear();
            }
        }
        Value::Array(items) => {
            for item in items {
                prune(&schema["items"], item, false);
            }
        }
        _ => {}
    }
}

/// Validation state: causes and unknown-field paths found so far.
#[derive(Default)]
struct Check {
    causes: Vec<Cause>,
    unknown: Vec<String>,
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Check {
    fn required(&mut self, path: &str) {
        self.causes.push(Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: path.to_string(),
        });
    }

    /// kube-openapi validate/type.go: `<path> in body must be of type <type>: "<actual>"`.
    fn walk(&mut self, schema: &Value, value: &Value, path: &str) {
        if value.is_null() && schema["nullable"] == true {
            return;
        }
        let actual = type_name(value);
        let int_or_string = schema["x-kubernetes-int-or-string"] == true;
        let expected = schema["type"].as_str().unwrap_or("");
        let fits = match expected {
            "" => !int_or_string || matches!(actual, "integer" | "string"),
            "number" => matches!(actual, "integer" | "number"),
            other => other == actual,
        };
        if !fits {
            let wanted = if int_or_string { "integer or string" } else { expected };
            self.causes.push(Cause {
                reason: "FieldValueTypeInvalid".into(),
                // apiextensions validation reports the value's type as the invalid value.
                message: format!(
                    "Invalid value: {actual:?}: {path} in body must be of type {wanted}: {actual:?}"
                ),
                field: path.to_string(),
            });
            return;
        }
        if let Some(allowed) = schema["enum"].as_array()
            && !allowed.contains(value)
        {
            let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
            self.causes.push(Cause {
                reason: "FieldValueNotSupported".into(),
                message: format!("Unsupported value: {}: supported values: {}", value, listed.join(", ")),
                field: path.to_string(),
            });
        }
        match value {
            Value::Object(fields) => {
                let properties = schema["properties"].as_object();
                for (key, field) in fields {
                    let child = format!("{path}.{key}");
                    match properties.and_then(|p| p.get(key)) {
                        Some(property) => self.walk(property, field, &child),
                        None if schema["additionalProperties"].is_object() => {
                            self.walk(&schema["additionalProperties"], field, &child)
                        }
                        None if properties.is_some() && !preserves(schema) => self.unknown.push(child),
                        None => {}
                    }
                }
                for required in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str)
                {
                    if !fields.contains_key(required) {
                        self.required(&format!("{path}.{required}"));
                    }
                }
            }
            Value::Array(items) if schema["items"].is_object() => {
                for (index, item) in items.iter().enumerate() {
                    self.walk(&schema["items"], item, &format!("{path}[{index}]"));
                }
            }
            _ => {}
        }
    }
}

/// One cell: the JSONPath's values; dates as ages, several values joined with `,`
/// (tableconvertor.go `ConvertToTable`); nothing found is `<none>`-printed null.
fn cell(column: &Value, object: &Value, now: Timestamp) -> Value {
    let found = json_path(object, column["jsonPath"].as_str().unwrap_or_default());
    let Some(first) = found.first() else { return Value::Null };
    match column["type"].as_str() {
        Some("date") => {
            let Some(Ok(at)) = first.as_str().map(str::parse::<Timestamp>) else { return Value::Null };
            json!(human_duration(now.duration_since(at).as_secs()))
        }
        Some("integer" | "number" | "boolean") if found.len() == 1 => (*first).clone(),
        _ => {
            let texts: Vec<String> =
                found.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect();
            json!(texts.join(","))
        }
    }
}

/// A JSONPath of the simple form printer columns use: `.a.b`, `.a[0].b`, `.a[*].b`.
pub fn json_path<'a>(root: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut current = vec![root];
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let (field, indexes) = match segment.find('[') {
            Some(at) => (&segment[..at], &segment[at..]),
            None => (segment, ""),
        };
        if !field.is_empty() {
            current = current.into_iter().filter_map(|v| v.get(field)).collect();
        }
        for index in indexes.split(']').filter(|s| !s.is_empty()) {
            let index = index.trim_start_matches('[');
            current = current
                .into_iter()
                .flat_map(|v| match (v.as_array(), index) {
                    (Some(items), "*") => items.iter().collect::<Vec<_>>(),
                    (Some(items), n) => {
                        n.parse::<usize>().ok().and_then(|n| items.get(n)).into_iter().collect()
                    }
                    (None, _) => Vec::new(),
                })
                .collect();
        }
    }
    current.into_iter().filter(|v| !v.is_null()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printer_column_paths() {
        let object = json!({"spec": {"gpus": 2, "models": [{"name": "a"}, {"name": "b"}, {}]}});
        assert_eq!(json_path(&object, ".spec.gpus"), vec![&json!(2)]);
        assert_eq!(json_path(&object, ".spec.models[*].name"), vec![&json!("a"), &json!("b")]);
        assert_eq!(json_path(&object, "{.spec.models[1].name}"), vec![&json!("b")]);
        assert!(json_path(&object, ".spec.missing[0]").is_empty());
    }
}
