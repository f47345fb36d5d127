//! Server-side apply of lab manifests: kinds resolved through discovery, the lab and stage
//! labels added, field manager `lab-runner`.

use kube::{
    api::{Api, ApiResource, DynamicObject, Patch, PatchParams},
    discovery::{self, Scope},
};
use serde_json::Value;

use super::{
    Error, FIELD_MANAGER, LAB_LABEL, Result, STAGE_LABEL, inventory::AppliedObject, observe::gvk_of,
};
use crate::grade::KindKey;

/// The API for one object of `api_version`/`kind`, namespaced when the kind is, resolved through
/// discovery (so a CRD applied a moment ago is found once it is served).
pub async fn api_for(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Result<(Api<DynamicObject>, ApiResource)> {
    let gvk = gvk_of(&KindKey::new(api_version, kind));
    let (resource, capabilities) = discovery::pinned_kind(client, &gvk)
        .await
        .map_err(|e| Error::api(format!("resolving {api_version} {kind} through discovery"), &e))?;
    let api = match (capabilities.scope, namespace) {
        (Scope::Namespaced, Some(namespace)) => Api::namespaced_with(client.clone(), namespace, &resource),
        (Scope::Namespaced, None) => Api::default_namespaced_with(client.clone(), &resource),
        (Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
    };
    Ok((api, resource))
}

/// Applies one manifest document for `lab`'s `stage` and says what was applied.
pub async fn apply(client: &kube::Client, lab: &str, stage: &str, document: &Value) -> Result<AppliedObject> {
    let mut document = document.clone();
    let text = |pointer: &str| document.pointer(pointer).and_then(Value::as_str).map(str::to_string);
    let api_version = text("/apiVersion").unwrap_or_default();
    let kind = text("/kind").unwrap_or_default();
    let name = text("/metadata/name")
        .ok_or_else(|| Error::BadInput(format!("a {kind} manifest of lab {lab} has no metadata.name")))?;
    let namespace = text("/metadata/namespace");
    if let Some(metadata) = document.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = metadata.entry("labels").or_insert_with(|| Value::Object(Default::default()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(LAB_LABEL.into(), Value::String(lab.into()));
            labels.insert(STAGE_LABEL.into(), Value::String(stage.into()));
        }
    }
    let (api, _) = api_for(client, &api_version, &kind, namespace.as_deref()).await?;
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let shown = match &namespace {
        Some(namespace) => format!("{kind} {namespace}/{name}"),
        None => format!("{kind} {name}"),
    };
    api.patch(&name, &params, &Patch::Apply(&document))
        .await
        .map_err(|e| Error::api(format!("applying {shown}"), &e))?;
    Ok(AppliedObject { api_version, kind, namespace, name, stage: stage.to_string() })
}

/// Orders a stage's documents: Namespaces, then CustomResourceDefinitions, then the rest in file
/// order (a namespaced object needs its namespace; a custom resource needs its CRD served).
pub fn apply_order(documents: &[&Value]) -> Vec<Value> {
    let rank = |doc: &Value| match doc.get("kind").and_then(Value::as_str) {
        Some("Namespace") => 0,
        Some("CustomResourceDefinition") => 1,
        _ => 2,
    };
    let mut ordered: Vec<Value> = documents.iter().map(|d| (*d).clone()).collect();
    ordered.sort_by_key(rank);
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn namespaces_and_crds_go_first() {
        let pod = json!({"kind": "Pod"});
        let crd = json!({"kind": "CustomResourceDefinition"});
        let ns = json!({"kind": "Namespace"});
        let order: Vec<String> =
            apply_order(&[&pod, &crd, &ns]).iter().map(|d| d["kind"].as_str().unwrap().to_string()).collect();
        assert_eq!(order, ["Namespace", "CustomResourceDefinition", "Pod"]);
    }
}
