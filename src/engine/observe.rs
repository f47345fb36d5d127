//! Building the observed object set: one LIST per group-version-kind, scoped to what the lab's expectations can match.
//!
//! Kinds are turned into resources without a discovery round trip (`ApiResource::from_gvk`'s
//! plural), so a check costs exactly one request per kind; a kind whose guessed plural the
//! server does not know is resolved through discovery once and listed again. Each LIST carries
//! the kind's [`Scope`] from the grading [`Plan`]: the namespace in its path, the label
//! requirements and object name as `labelSelector` and `fieldSelector`.

use kube::{
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams},
    discovery::{self, Scope as ResourceScope},
};
use serde::Deserialize;
use serde_json::Value;

use super::cluster::{one_line, with_retries};
use crate::grade::{KindKey, Observation, Plan, Scope, Unreadable};

/// The group-version-kind of a key (`apps/v1` → group `apps`, version `v1`).
pub fn gvk_of(key: &KindKey) -> GroupVersionKind {
    let (group, version) = match key.api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", key.api_version.as_str()),
    };
    GroupVersionKind::gvk(group, version, &key.kind)
}

/// What one scoped LIST returned: the objects read, and those that could not be.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    /// The objects, with apiVersion and kind set on each.
    pub objects: Vec<Value>,
    /// Objects whose metadata does not decode, as listed, with why.
    pub unreadable: Vec<Unreadable>,
}

/// The list parameters of a scope: its `labelSelector` and `fieldSelector`.
pub fn list_params(scope: &Scope) -> ListParams {
    ListParams {
        label_selector: scope.label_selector(),
        field_selector: scope.field_selector(),
        ..ListParams::default()
    }
}

/// Lists the objects of `key` that `scope` admits. A scope naming a namespace of a kind the
/// server says is cluster-scoped (found through the discovery a 404 triggers) lists the kind
/// without it: no object of such a kind has a namespace, so grading selects none of them either.
pub async fn list_scoped(client: &kube::Client, key: &KindKey, scope: &Scope) -> Result<Listed, kube::Error> {
    let gvk = gvk_of(key);
    let guessed = ApiResource::from_gvk(&gvk);
    let params = list_params(scope);
    let namespace = scope.namespace.as_deref();
    let listed = match list_with(client, &guessed, namespace, &params).await {
        Err(kube::Error::Api(status)) if status.code == 404 => {
            let (resource, capabilities) = discovery::pinned_kind(client, &gvk).await?;
            let namespace = match capabilities.scope {
                ResourceScope::Cluster => None,
                ResourceScope::Namespaced => namespace,
            };
            list_with(client, &resource, namespace, &params).await?
        }
        other => other?,
    };
    let mut out = Listed::default();
    let with_kind = |mut value: Value| {
        if let Some(map) = value.as_object_mut() {
            map.insert("apiVersion".into(), Value::String(key.api_version.clone()));
            map.insert("kind".into(), Value::String(key.kind.clone()));
        }
        value
    };
    for item in listed {
        match item {
            Ok(object) => out.objects.push(with_kind(serde_json::to_value(object).unwrap_or(Value::Null))),
            Err((raw, reason)) => out.unreadable.push(Unreadable { object: with_kind(raw), reason }),
        }
    }
    Ok(out)
}

/// Lists every object of `key` in every namespace, with apiVersion and kind set on each item;
/// an object that cannot be read is left out with a warning.
pub async fn list_kind(client: &kube::Client, key: &KindKey) -> Result<Vec<Value>, kube::Error> {
    let listed = list_scoped(client, key, &Scope::whole()).await?;
    for unreadable in &listed.unreadable {
        let name = unreadable.object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("?");
        tracing::warn!("skipping malformed {} {name:?}: {}", key.kind, unreadable.reason);
    }
    Ok(listed.objects)
}

/// Lists `resource` (in `namespace`, or every namespace) as raw JSON and reads the items one by
/// one: an object whose metadata does not decode (an ill-typed object stored before the server
/// refused such writes, or by another client) comes back as it was listed, with why, instead of
/// failing the whole kind.
async fn list_with(
    client: &kube::Client,
    resource: &ApiResource,
    namespace: Option<&str>,
    params: &ListParams,
) -> Result<Vec<Result<DynamicObject, (Value, String)>>, kube::Error> {
    let url = <DynamicObject as kube::Resource>::url_path(resource, namespace);
    let mut list: Value = with_retries(|| async {
        let request = kube::core::Request::new(&url).list(params).map_err(kube::Error::BuildRequest)?;
        client.request::<Value>(request).await
    })
    .await?;
    let items = match list.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    Ok(items
        .into_iter()
        .map(|item| match DynamicObject::deserialize(&item) {
            Ok(object) => Ok(object),
            Err(error) => Err((item, error.to_string())),
        })
        .collect())
}

/// Lists each kind of `plan` once, with its scope, concurrently; a kind that fails is left
/// unobserved with its reason.
pub async fn observe(client: &kube::Client, plan: &Plan) -> Observation {
    let lists = futures::future::join_all(
        plan.iter().map(|(key, scope)| async move { (key.clone(), list_scoped(client, key, scope).await) }),
    )
    .await;
    let mut observation = Observation::default();
    for (key, listed) in lists {
        match listed {
            Ok(listed) => {
                observation.observed.insert(&key.api_version, &key.kind, listed.objects);
                if !listed.unreadable.is_empty() {
                    observation.unreadable.insert(key, listed.unreadable);
                }
            }
            Err(e) => {
                let reason = match &e {
                    kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
                    other => one_line(other),
                };
                observation.failures.insert(key, reason);
            }
        }
    }
    observation
}

/// Every node, through the tolerant LIST of [`list_kind`] (a malformed node is skipped).
pub async fn list_nodes(client: &kube::Client) -> Result<Vec<k8s_openapi::api::core::v1::Node>, kube::Error> {
    Ok(typed(&list_kind(client, &KindKey::new("v1", "Node")).await?))
}

/// Parses observed JSON objects of one kind into a typed object, skipping any that do not parse.
pub fn typed<T: serde::de::DeserializeOwned>(objects: &[Value]) -> Vec<T> {
    objects.iter().filter_map(|o| serde_json::from_value(o.clone()).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_and_grouped_kinds_split() {
        let core = gvk_of(&KindKey::new("v1", "Pod"));
        assert_eq!((core.group.as_str(), core.version.as_str()), ("", "v1"));
        let apps = gvk_of(&KindKey::new("apps/v1", "DaemonSet"));
        assert_eq!(
            (apps.group.as_str(), apps.version.as_str(), apps.kind.as_str()),
            ("apps", "v1", "DaemonSet")
        );
    }
}
