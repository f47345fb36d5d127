//! CustomResourceDefinitions: establishing them and serving their types; their custom resources'
//! strategy (pruning, schema validation, printer columns) is `kinds::apiextensions::customresource`.
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

use super::{SimState, fieldvalidation::Mode, status::ApiError, table};
use crate::{
    crdvalidation,
    kinds::apiextensions::customresource::{self, CustomResource},
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
    /// A custom resource was refused (422 Invalid, or 400 under `fieldValidation=Strict`).
    #[error(transparent)]
    Resource(#[from] customresource::Error),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        match error {
            Error::Store(e) => ApiError::from(e),
            Error::Resource(e) => e.into(),
        }
    }
}

impl From<customresource::Error> for ApiError {
    fn from(error: customresource::Error) -> Self {
        match error {
            customresource::Error::Strict(message) => ApiError::bad_request(message),
            customresource::Error::Invalid { message, causes, group, kind, name } => {
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

/// The strategy of the custom resources served as `rt` — its CRD version's schema, compiled
/// validator and printer columns, read from the store before a write's transaction starts (the
/// store lock is not re-entrant); `None` for a built-in type.
pub fn custom_resource(state: &SimState, rt: &ResourceType) -> Option<CustomResource> {
    if resources::is_built_in(&rt.group, &rt.plural) {
        return None;
    }
    let crd = state.store.get(CRD_GROUP_RESOURCE, "", &rt.group_resource())?.value().ok()?;
    CustomResource::new(&rt.group, &rt.version, &rt.kind, &crd)
}

/// Whether `field_validation` (the request's `fieldValidation`) is `Strict`.
pub fn strict(field_validation: Option<&str>) -> Result<bool> {
    let mode =
        Mode::from_query(field_validation).map_err(|e| customresource::Error::Strict(e.to_string()))?;
    Ok(mode == Mode::Strict)
}

/// Admits a new object of `rt` before it is stored, where the body is decoded: a CRD whose
/// rules do not compile is refused; a custom resource is pruned and validated against its CRD
/// ([`admit_custom`]); nothing for the other built-in types.
pub fn admit(
    state: &SimState,
    rt: &ResourceType,
    object: &mut Value,
    field_validation: Option<&str>,
) -> Result<()> {
    if defines_types(rt) {
        return validate_definition(rt, object);
    }
    match custom_resource(state, rt).filter(CustomResource::has_schema) {
        Some(custom) => admit_custom(&custom, object, None, field_validation),
        None => Ok(()),
    }
}

/// Prunes a custom resource's next state (400 for an unknown field under
/// `fieldValidation=Strict`), checks that its metadata decodes, then validates it against its
/// CRD version ([`CustomResource::validate`]; `old`: the stored object on update).
pub fn admit_custom(
    custom: &CustomResource,
    object: &mut Value,
    old: Option<&Value>,
    field_validation: Option<&str>,
) -> Result<()> {
    let strict = strict(field_validation)?;
    custom.prune(object, strict)?;
    if let Some(metadata) = object.get("metadata").filter(|m| !m.is_null()) {
        metadata_decodes(custom, metadata)?;
    }
    Ok(custom.check(object, old)?)
}

/// A custom resource's metadata of the wrong JSON type is refused while the body is decoded, as
/// apiextensions' schema coercion decodes it into `metav1.ObjectMeta` (400 from
/// `transformDecodeError`, `endpoints/handlers/rest.go`).
fn metadata_decodes(custom: &CustomResource, metadata: &Value) -> Result<()> {
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
    let kind = custom.kind();
    Err(customresource::Error::Strict(format!(
        "{kind} in version \"{}\" cannot be handled as a {kind}: {problem}",
        custom.version()
    ))
    .into())
}

/// A CRD whose `x-kubernetes-validations` rules do not compile is refused (422), as
/// apiextensions' `ValidateCustomResourceDefinition` refuses it.
fn validate_definition(rt: &ResourceType, crd: &Value) -> Result<()> {
    let errors = crdvalidation::rules::validate_definition(crd);
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    Ok(customresource::refuse(&rt.group, &rt.kind, name, customresource::causes(&errors))?)
}

/// A `Table` for `objects` of `rt`: the CRD's printer columns for custom types
/// ([`CustomResource::table`]), [`table::render`] otherwise.
pub fn render_table(
    state: &SimState,
    rt: &ResourceType,
    objects: &[Value],
    resource_version: &str,
    now: Timestamp,
) -> Value {
    match custom_resource(state, rt) {
        Some(custom) => custom.table(objects, resource_version, now),
        None => table::render(rt, objects, resource_version, now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{clock::Clock, store::Store};

    fn prometheus_rule_crd() -> Value {
        let text = include_str!("../../../../manifests/crds/prometheusrules.yaml");
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
}
