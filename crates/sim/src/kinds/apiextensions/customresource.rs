//! Custom resources: the strategy of every type a CRD serves (apiextensions-apiserver
//! `pkg/registry/customresource`): generation, pruning, schema validation and printer columns.
//!
//! Two parts. [`CUSTOM_RESOURCES`] is what the generic registry asks of every custom resource
//! (`kinds::strategy` hands it out for a resource outside the built-in API groups): a generation
//! that follows everything but `metadata` and `status`, no quantity decoding. [`CustomResource`]
//! is one served version of one CRD — its schema, compiled validator and printer columns — which
//! the server builds from the stored CRD before a write's transaction
//! (`server::crd::custom_resource`; the store lock is not re-entrant) and runs as the body is
//! decoded (`server::crd::admit_custom`): [`CustomResource::prune`] drops unknown fields (or
//! refuses them under `fieldValidation=Strict`, pkg/apiserver/schema/pruning/algorithm.go),
//! then [`CustomResource::validate`] applies the schema (`sim::crdvalidation`: value
//! validation, list types, metadata, `x-kubernetes-validations` rules, with the stored object as
//! `old` on an update or a patch). Printed with the version's `additionalPrinterColumns`
//! (pkg/registry/customresource/tableconvertor).

use k8s_openapi::jiff::Timestamp;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::{
    crdvalidation::{FieldError, Validator},
    kinds::{
        Strategy,
        field::{self, Cause, invalid_message},
        printer::{NAME_DOC, human_duration},
    },
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
    /// The schema's validator, compiled once per CRD revision (`None` without a schema).
    validator: Option<Arc<Validator>>,
    /// The version's `additionalPrinterColumns`.
    columns: Vec<Value>,
}

impl CustomResource {
    /// The custom resources of `group`/`version`/`kind`, served by the CRD `crd` (its version
    /// named `version`); `None` when the CRD does not serve that version.
    pub fn new(group: &str, version: &str, kind: &str, crd: &Value) -> Option<CustomResource> {
        let served = crd["spec"]["versions"].as_array()?.iter().find(|v| v["name"] == version)?;
        let schema = served["schema"]["openAPIV3Schema"].clone();
        // The rules compile once per CRD revision and version.
        let metadata = &crd["metadata"];
        let validator = schema.is_object().then(|| {
            let key = format!("{}/{}/{version}", metadata["uid"], metadata["resourceVersion"]);
            Validator::cached(&key, &schema)
        });
        Some(CustomResource {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            schema,
            validator,
            columns: served["additionalPrinterColumns"].as_array().cloned().unwrap_or_default(),
        })
    }

    /// The kind, e.g. `PrometheusRule`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The API version's version, e.g. `v1`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Whether the version has a schema to prune and validate against.
    pub fn has_schema(&self) -> bool {
        self.schema.is_object()
    }

    /// Drops the fields the schema does not declare from `object`, or refuses them when
    /// `strict` (`fieldValidation=Strict`); nothing without a schema.
    pub fn prune(&self, object: &mut Value, strict: bool) -> Result<(), Error> {
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
        Ok(())
    }

    /// The schema's causes against `object`, pruned (`old`: the stored object on update, for
    /// the transition rules): `customResourceStrategy.Validate`/`ValidateUpdate` as
    /// `sim::crdvalidation` runs them; empty without a schema.
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let type_meta = self.validate_type_meta(object);
        if !type_meta.is_empty() {
            return type_meta;
        }
        match &self.validator {
            Some(validator) => causes(&validator.validate(object, old)),
            None => Vec::new(),
        }
    }

    /// apiextensions-apiserver `customresource/validator.go` `ValidateTypeMeta`, which
    /// `Validate` and `ValidateUpdate` run first and alone: a merge or JSON patch that changes
    /// `kind` or `apiVersion` reaches validation with the changed values (`kind: Invalid value:
    /// "Bogus": must be Widget`). An absent or empty value is the URL's (the request's
    /// decoding supplies it).
    fn validate_type_meta(&self, object: &Value) -> Vec<Cause> {
        let mut causes = Vec::new();
        let kind = object["kind"].as_str().unwrap_or_default();
        if !kind.is_empty() && kind != self.kind {
            causes.push(field::invalid("kind", &format!("{kind:?}"), &format!("must be {}", self.kind)));
        }
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let expected = format!("{}/{}", self.group, self.version);
        if !api_version.is_empty() && api_version != expected {
            causes.push(field::invalid(
                "apiVersion",
                &format!("{api_version:?}"),
                &format!("must be {expected}"),
            ));
        }
        causes
    }

    /// [`CustomResource::validate`] as a 422 Invalid when it finds anything.
    pub fn check(&self, object: &Value, old: Option<&Value>) -> Result<(), Error> {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        self.refuse(name, self.validate(object, old))
    }

    /// `causes` for the object `name` as a 422 Invalid; `Ok` when there are none.
    pub fn refuse(&self, name: &str, causes: Vec<Cause>) -> Result<(), Error> {
        refuse(&self.group, &self.kind, name, causes)
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

/// The paths of fields the schema does not declare (for `fieldValidation=Strict` and
/// pruning); value validation is `sim::crdvalidation`'s.
#[derive(Default)]
struct Check {
    unknown: Vec<String>,
}

impl Check {
    fn walk(&mut self, schema: &Value, value: &Value, path: &str) {
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

/// `crdvalidation`'s errors as `Status` causes.
pub fn causes(errors: &[FieldError]) -> Vec<Cause> {
    errors
        .iter()
        .map(|e| Cause { reason: e.reason.cause().into(), message: e.body(), field: e.field.clone() })
        .collect()
}

/// `causes` of the object `name` of `group`/`kind` as a 422 Invalid; `Ok` when there are none.
pub fn refuse(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Result<(), Error> {
    if causes.is_empty() {
        return Ok(());
    }
    Err(Error::Invalid {
        message: invalid_message(group, kind, name, &causes),
        causes,
        group: group.to_string(),
        kind: kind.to_string(),
        name: name.to_string(),
    })
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
