//! Server-side apply of lab manifests: kinds resolved through discovery, the lab and stage
//! labels added, field manager `lab-runner`.

use kube::{
    api::{Api, ApiResource, DynamicObject, Patch, PatchParams},
    discovery::{self, Scope},
};
use serde_json::Value;

use super::{Error, FIELD_MANAGER, LAB_LABEL, Result, STAGE_LABEL, observe::gvk_of};
use crate::{grade::KindKey, msg};

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
        .map_err(|e| Error::api(msg!("action-resolve", kind = format!("{api_version} {kind}")), &e))?;
    let api = match (capabilities.scope, namespace) {
        (Scope::Namespaced, Some(namespace)) => Api::namespaced_with(client.clone(), namespace, &resource),
        (Scope::Namespaced, None) => Api::default_namespaced_with(client.clone(), &resource),
        (Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
    };
    Ok((api, resource))
}

/// What a manifest document names: apiVersion, kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// apiVersion.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace, as the manifest gives it.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl Identity {
    /// Reads a manifest document's identity; a document without a name is bad input.
    pub fn of(lab: &str, document: &Value) -> Result<Identity> {
        let text = |pointer: &str| document.pointer(pointer).and_then(Value::as_str).map(str::to_string);
        let kind = text("/kind").unwrap_or_default();
        let name = text("/metadata/name")
            .ok_or_else(|| Error::BadInput(msg!("apply-unnamed", kind = &kind, lab = lab)))?;
        Ok(Identity {
            api_version: text("/apiVersion").unwrap_or_default(),
            kind,
            namespace: text("/metadata/namespace"),
            name,
        })
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{} {namespace}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The labels `apply` adds to a document for `lab`'s `stage`.
pub fn labelled(lab: &str, stage: &str, document: &Value) -> Value {
    let mut document = document.clone();
    if let Some(metadata) = document.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = metadata.entry("labels").or_insert_with(|| Value::Object(Default::default()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(LAB_LABEL.into(), Value::String(lab.into()));
            labels.insert(STAGE_LABEL.into(), Value::String(stage.into()));
        }
    }
    document
}

/// Applies one manifest document for `lab`'s `stage`; returns the applied object's uid.
pub async fn apply(client: &kube::Client, lab: &str, stage: &str, document: &Value) -> Result<String> {
    let identity = Identity::of(lab, document)?;
    let document = labelled(lab, stage, document);
    let (api, _) =
        api_for(client, &identity.api_version, &identity.kind, identity.namespace.as_deref()).await?;
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let applied = api
        .patch(&identity.name, &params, &Patch::Apply(&document))
        .await
        .map_err(|e| Error::api(msg!("action-apply", object = identity.to_string()), &e))?;
    Ok(applied.metadata.uid.unwrap_or_default())
}

/// Server-side applies `documents` in order as `field_manager` (a cluster fixture, as its owners
/// would); a custom resource whose CRD was applied a moment ago is retried for up to ten seconds
/// while the CRD becomes served.
pub async fn apply_documents(client: &kube::Client, documents: &[Value], field_manager: &str) -> Result<()> {
    let params = PatchParams::apply(field_manager).force();
    for document in documents {
        let identity = Identity::of(field_manager, document)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let applied = async {
                let (api, _) =
                    api_for(client, &identity.api_version, &identity.kind, identity.namespace.as_deref())
                        .await?;
                api.patch(&identity.name, &params, &Patch::Apply(document))
                    .await
                    .map_err(|e| Error::api(msg!("action-apply", object = identity.to_string()), &e))
            }
            .await;
            match applied {
                Ok(_) => break,
                Err(_) if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
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
