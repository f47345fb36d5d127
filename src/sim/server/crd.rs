//! CustomResourceDefinitions: establishing them, serving their types, validating and printing
//! their custom resources.
//!
//! Follows apiextensions-apiserver v1.33: the naming controller sets `NamesAccepted` and
//! `status.acceptedNames`, the establishing controller sets `Established`
//! (pkg/controller/status/naming_controller.go, pkg/controller/establish/establishing_controller.go);
//! custom resources are pruned and validated against the version's structural schema
//! (pkg/apiserver/schema/pruning/algorithm.go, pkg/apiserver/validation) and printed with the
//! version's `additionalPrinterColumns` (pkg/registry/customresource/tableconvertor). Deleting a
//! CRD deletes its custom resources (pkg/controller/finalizer/crd_finalizer.go).

use jiff::Timestamp;
use serde_json::{Value, json};

use k8s_openapi::jiff;

use super::{
    SimState,
    admission::{self, Cause},
    fieldvalidation::Mode,
    status::ApiError,
    table,
};
use crate::sim::{
    crdvalidation,
    resources::{self, ResourceType, Scope},
    store::{self, DeleteOptions, DryRun, Subresource},
};

/// The group-resource CRDs are stored under.
pub const CRD_GROUP_RESOURCE: &str = "customresourcedefinitions.apiextensions.k8s.io";

/// Errors of CRD handling.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing the store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// A custom resource does not match its CRD's schema (422 Invalid).
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

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        match error {
            Error::Store(e) => ApiError::from(e),
            Error::Strict(message) => ApiError::bad_request(message),
            Error::Invalid { message, causes, group, kind, name } => {
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect();
                ApiError::invalid(
                    message,
                    json!({"name": name, "group": group, "kind": kind, "causes": causes}),
                )
            }
        }
    }
}

/// The resource types a CRD object defines: one per served version.
pub fn types_of(crd: &Value) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let kind = names["kind"].as_str().unwrap_or_default();
    let plural = names["plural"].as_str().unwrap_or_default();
    let Some(versions) = spec["versions"].as_array() else { return Vec::new() };
    versions
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(false))
        .map(|version| {
            let mut subresources = Vec::new();
            if version["subresources"]["status"].is_object() {
                subresources.push("status".to_string());
            }
            if version["subresources"]["scale"].is_object() {
                subresources.push("scale".to_string());
            }
            ResourceType {
                group: spec["group"].as_str().unwrap_or_default().to_string(),
                version: version["name"].as_str().unwrap_or_default().to_string(),
                kind: kind.to_string(),
                plural: plural.to_string(),
                singular: names["singular"].as_str().map_or_else(|| kind.to_lowercase(), str::to_string),
                scope: if spec["scope"] == "Cluster" { Scope::Cluster } else { Scope::Namespaced },
                short_names: strings(&names["shortNames"]),
                categories: strings(&names["categories"]),
                verbs: ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
                    .map(str::to_string)
                    .to_vec(),
                subresources,
            }
        })
        .collect()
}

fn crd_type() -> ResourceType {
    resources::built_in()
        .into_iter()
        .find(|t| t.group == "apiextensions.k8s.io" && t.plural == "customresourcedefinitions")
        .expect("the CRD type is built in")
}

fn all_crds(state: &SimState) -> Result<Vec<Value>> {
    let page = state.store.list(CRD_GROUP_RESOURCE, None, &|_| true, None, None);
    Ok(page.items.iter().map(|stored| stored.value()).collect::<Result<_, _>>()?)
}

fn is_established(crd: &Value) -> bool {
    crate::k8s::condition::object_condition_true(crd, "Established")
}

/// Brings served types in line with the stored CRDs: establishes new CRDs (conditions and
/// accepted names), serves their versions, and for CRDs that are gone stops serving their
/// types and deletes their objects. Call after every CRD write and at startup.
pub fn reconcile(state: &SimState) -> Result<()> {
    let crd_rt = crd_type();
    let now = state.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let mut custom = Vec::new();
    for mut crd in all_crds(state)? {
        if crd["metadata"]["deletionTimestamp"].is_string() {
            continue;
        }
        if !is_established(&crd) {
            let condition = |kind: &str, reason: &str, message: &str| json!({"type": kind, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message});
            let storage = crd["spec"]["versions"]
                .as_array()
                .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
                .and_then(|v| v["name"].as_str())
                .unwrap_or_default()
                .to_string();
            crd["status"] = json!({
                "conditions": [
                    condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                    condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
                ],
                "acceptedNames": crd["spec"]["names"],
                "storedVersions": [storage],
            });
            state.store.update(&crd_rt, crd.clone(), Subresource::Status, DryRun::Off)?;
        }
        custom.extend(types_of(&crd));
    }
    let removed: Vec<ResourceType> = {
        let mut types = state.types.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        let built_in = resources::built_in();
        let removed = types
            .iter()
            .filter(|t| !built_in.contains(t))
            .filter(|t| !custom.iter().any(|c| c.group_resource() == t.group_resource()))
            .cloned()
            .collect();
        *types = built_in;
        types.extend(custom);
        removed
    };
    for rt in removed {
        state.store.delete_collection(&rt, None, &|_| true, &DeleteOptions::default())?;
    }
    Ok(())
}

/// Every custom type served from an established CRD, with its version's `openAPIV3Schema`
/// (`null` for a version without one), for the OpenAPI v3 documents.
pub fn served_schemas(state: &SimState) -> Result<Vec<(ResourceType, Value)>> {
    let mut served = Vec::new();
    for crd in all_crds(state)? {
        if crd["metadata"]["deletionTimestamp"].is_string() || !is_established(&crd) {
            continue;
        }
        let versions = crd["spec"]["versions"].as_array().cloned().unwrap_or_default();
        for rt in types_of(&crd) {
            let schema = versions
                .iter()
                .find(|v| v["name"] == rt.version.as_str())
                .map(|v| v["schema"]["openAPIV3Schema"].clone())
                .unwrap_or(Value::Null);
            served.push((rt, schema));
        }
    }
    Ok(served)
}

/// True for writes that change the set of CRDs.
pub fn defines_types(rt: &ResourceType) -> bool {
    rt.group_resource() == CRD_GROUP_RESOURCE
}

/// True when `rt` is served from a CustomResourceDefinition (its Table comes from the CRD's
/// printer columns).
pub fn is_custom(state: &SimState, rt: &ResourceType) -> bool {
    version_of(state, rt).is_some()
}

/// The CRD version serving `rt`, if `rt` is a custom type.
fn version_of(state: &SimState, rt: &ResourceType) -> Option<Value> {
    if resources::is_built_in(&rt.group, &rt.plural) {
        return None;
    }
    let crd = state.store.get(CRD_GROUP_RESOURCE, "", &rt.group_resource())?.value().ok()?;
    crd["spec"]["versions"].as_array()?.iter().find(|v| v["name"] == rt.version.as_str()).cloned()
}

/// The schema custom resources of one type are admitted against, read from its CRD before a
/// store transaction starts (the store lock is not re-entrant).
#[derive(Debug, Clone)]
pub struct Admission {
    rt: ResourceType,
    schema: Value,
    validator: std::sync::Arc<crdvalidation::Validator>,
}

/// The [`Admission`] of `rt`; `None` for built-in types and versions without a schema.
pub fn admission(state: &SimState, rt: &ResourceType) -> Option<Admission> {
    if resources::is_built_in(&rt.group, &rt.plural) {
        return None;
    }
    let crd = state.store.get(CRD_GROUP_RESOURCE, "", &rt.group_resource())?.value().ok()?;
    let version = crd["spec"]["versions"].as_array()?.iter().find(|v| v["name"] == rt.version.as_str())?;
    let schema = version["schema"]["openAPIV3Schema"].clone();
    if !schema.is_object() {
        return None;
    }
    // The rules compile once per CRD revision and version.
    let metadata = &crd["metadata"];
    let key = format!("{}/{}/{}", metadata["uid"], metadata["resourceVersion"], rt.version);
    let validator = crdvalidation::Validator::cached(&key, &schema);
    Some(Admission { rt: rt.clone(), schema, validator })
}

/// Prunes and validates a custom resource against its CRD's schema before it is stored; a no-op
/// for built-in types. Unknown fields are dropped, or refused under `fieldValidation=Strict`.
pub fn admit(
    state: &SimState,
    rt: &ResourceType,
    object: &mut Value,
    field_validation: Option<&str>,
) -> Result<()> {
    if defines_types(rt) {
        return validate_definition(rt, object);
    }
    match admission(state, rt) {
        Some(admission) => admission.admit(object, None, field_validation),
        None => Ok(()),
    }
}

/// A CRD whose `x-kubernetes-validations` rules do not compile is refused (422), as
/// apiextensions' `ValidateCustomResourceDefinition` refuses it.
fn validate_definition(rt: &ResourceType, crd: &Value) -> Result<()> {
    let errors = crdvalidation::rules::validate_definition(crd);
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    invalid(rt, name, &errors)
}

/// `errors` as a 422 Invalid of `rt`'s object `name`; `Ok` when there are none.
fn invalid(rt: &ResourceType, name: &str, errors: &[crdvalidation::FieldError]) -> Result<()> {
    if errors.is_empty() {
        return Ok(());
    }
    let causes: Vec<Cause> = errors
        .iter()
        .map(|e| Cause { reason: e.reason.cause().into(), message: e.body(), field: e.field.clone() })
        .collect();
    Err(Error::Invalid {
        message: admission::invalid_message(rt, name, &causes),
        causes,
        group: rt.group.clone(),
        kind: rt.kind.clone(),
        name: name.to_string(),
    })
}

impl Admission {
    /// Prunes and validates `object` (see [`admit`]); `old` is the stored object on update.
    pub fn admit(
        &self,
        object: &mut Value,
        old: Option<&Value>,
        field_validation: Option<&str>,
    ) -> Result<()> {
        let (rt, schema) = (&self.rt, &self.schema);
        let mode = Mode::from_query(field_validation).map_err(|e| Error::Strict(e.to_string()))?;
        let mut check = Check::default();
        if let Some(fields) = object.as_object_mut() {
            for (key, value) in fields.iter_mut() {
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
        if mode == Mode::Strict && !check.unknown.is_empty() {
            let problems: Vec<String> =
                check.unknown.iter().map(|p| format!("unknown field \"{p}\"")).collect();
            return Err(Error::Strict(format!(
                "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
                rt.kind,
                rt.version,
                rt.kind,
                problems.join(", ")
            )));
        }
        prune(schema, object, true);
        if let Some(metadata) = object.get("metadata").filter(|m| !m.is_null()) {
            metadata_decodes(rt, metadata)?;
        }
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
        invalid(rt, &name, &self.validator.validate(object, old))
    }
}

/// A custom resource's metadata of the wrong JSON type is refused while the body is decoded, as
/// apiextensions' schema coercion decodes it into `metav1.ObjectMeta` (400 from
/// `transformDecodeError`, `endpoints/handlers/rest.go`).
fn metadata_decodes(rt: &ResourceType, metadata: &Value) -> Result<()> {
    let problem = if metadata.is_object() {
        match super::typecheck::check_object_meta(metadata) {
            Ok(()) => return Ok(()),
            Err(error) => error.to_string(),
        }
    } else {
        let found = match metadata {
            Value::Array(_) => "array",
            Value::String(_) => "string",
            Value::Bool(_) => "bool",
            _ => "number",
        };
        format!("json: cannot unmarshal {found} into Go value of type v1.ObjectMeta")
    };
    let kind = &rt.kind;
    Err(Error::Strict(format!(
        "{kind} in version \"{}\" cannot be handled as a {kind}: {problem}",
        rt.version
    )))
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
/// pruning); value validation is [`crdvalidation`]'s.
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

/// A `Table` for `objects` of `rt`: the CRD's printer columns for custom types (NAME + the
/// columns, or NAME + AGE when the version declares none), [`table::render`] otherwise.
pub fn render_table(
    state: &SimState,
    rt: &ResourceType,
    objects: &[Value],
    resource_version: &str,
    now: Timestamp,
) -> Value {
    let Some(version) = version_of(state, rt) else {
        return table::render(rt, objects, resource_version, now);
    };
    let declared = version["additionalPrinterColumns"].as_array().cloned().unwrap_or_default();
    let columns: Vec<Value> = if declared.is_empty() {
        vec![json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})]
    } else {
        declared
    };
    let mut definitions = vec![json!({"name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"})];
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

/// One cell: the JSONPath's values; dates as ages, several values joined with `,`
/// (tableconvertor.go `ConvertToTable`); nothing found is `<none>`-printed null.
fn cell(column: &Value, object: &Value, now: Timestamp) -> Value {
    let found = json_path(object, column["jsonPath"].as_str().unwrap_or_default());
    let Some(first) = found.first() else { return Value::Null };
    match column["type"].as_str() {
        Some("date") => {
            let Some(Ok(at)) = first.as_str().map(str::parse::<Timestamp>) else { return Value::Null };
            json!(table::human_duration(now.duration_since(at).as_secs()))
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
    use crate::sim::{clock::Clock, store::Store};

    fn prometheus_rule_crd() -> Value {
        let text = include_str!("../../../manifests/crds/prometheusrules.yaml");
        serde_saphyr::from_str(text).unwrap()
    }

    fn state_with_crd() -> (SimState, ResourceType) {
        let state = SimState::new(Store::in_memory().unwrap(), Clock::real());
        super::super::ensure_system_namespaces(&state).unwrap();
        state.store.create(&crd_type(), prometheus_rule_crd()).unwrap();
        reconcile(&state).unwrap();
        let rt = state.types.read().unwrap().iter().find(|t| t.kind == "PrometheusRule").cloned().unwrap();
        (state, rt)
    }

    #[test]
    fn a_crd_defines_one_type_per_served_version() {
        let rt = types_of(&prometheus_rule_crd()).remove(0);
        assert_eq!(rt.group_resource(), "prometheusrules.monitoring.coreos.com");
        assert_eq!(
            (rt.api_version().as_str(), rt.short_names.as_slice()),
            ("monitoring.coreos.com/v1", &["promrule".to_string()][..])
        );
        assert!(rt.namespaced());
    }

    #[test]
    fn reconcile_establishes_serves_and_retires() {
        let (state, rt) = state_with_crd();
        let crd = state.store.get(CRD_GROUP_RESOURCE, "", "prometheusrules.monitoring.coreos.com").unwrap();
        let crd = crd.value().unwrap();
        assert!(is_established(&crd));
        assert_eq!(crd["status"]["acceptedNames"]["kind"], "PrometheusRule");
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
        let rule = json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
            "metadata": {"name": "r", "namespace": "default"},
            "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": 1}]}]}});
        state.store.create(&rt, rule).unwrap();
        state
            .store
            .delete(&crd_type(), "", "prometheusrules.monitoring.coreos.com", &DeleteOptions::default())
            .unwrap();
        reconcile(&state).unwrap();
        assert!(!state.types.read().unwrap().contains(&rt));
        assert!(state.store.get(&rt.group_resource(), "default", "r").is_none(), "objects go with their CRD");
    }

    #[test]
    fn custom_resources_are_pruned_and_validated() {
        let (state, rt) = state_with_crd();
        let mut rule = json!({"metadata": {"name": "r"}, "stray": 1,
            "spec": {"groups": [{"name": "g", "extra": true, "rules": [{"expr": "up == 0", "for": "5m"}]}]}});
        admit(&state, &rt, &mut rule, None).unwrap();
        assert_eq!(
            rule,
            json!({"metadata": {"name": "r"},
            "spec": {"groups": [{"name": "g", "rules": [{"expr": "up == 0", "for": "5m"}]}]}})
        );
        let mut strict =
            json!({"metadata": {"name": "r"}, "spec": {"groups": [{"name": "g", "rules": [], "x": 1}]}});
        let error = admit(&state, &rt, &mut strict, Some("Strict")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "PrometheusRule in version \"v1\" cannot be handled as a PrometheusRule: strict decoding error: unknown field \"spec.groups[0].x\""
        );
        let mut invalid = json!({"metadata": {"name": "r"}, "spec": {"groups": [{"rules": [{"expr": []}]}]}});
        let error = admit(&state, &rt, &mut invalid, None).unwrap_err();
        insta::assert_snapshot!(error.to_string(), @r#"PrometheusRule.monitoring.coreos.com "r" is invalid: [spec.groups[0].name: Required value, spec.groups[0].rules[0].expr: Invalid value: "array": spec.groups[0].rules[0].expr in body must be of type integer,string: "array"]"#);
        let mut no_spec = json!({"metadata": {"name": "r"}});
        assert!(admit(&state, &rt, &mut no_spec, None).is_err(), "spec is required");
    }

    #[test]
    fn printer_column_paths() {
        let object = json!({"spec": {"gpus": 2, "models": [{"name": "a"}, {"name": "b"}, {}]}});
        assert_eq!(json_path(&object, ".spec.gpus"), vec![&json!(2)]);
        assert_eq!(json_path(&object, ".spec.models[*].name"), vec![&json!("a"), &json!("b")]);
        assert_eq!(json_path(&object, "{.spec.models[1].name}"), vec![&json!("b")]);
        assert!(json_path(&object, ".spec.missing[0]").is_empty());
    }
}
