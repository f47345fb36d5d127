//! Building the observed object set: one LIST per group-version-kind, nothing else.
//!
//! Kinds are turned into resources without a discovery round trip (`ApiResource::from_gvk`'s
//! plural), so a check costs exactly one request per kind; a kind whose guessed plural the
//! server does not know is resolved through discovery once and listed again.

use std::collections::BTreeSet;

use kube::{
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams},
    discovery,
};
use serde_json::Value;

use super::cluster::{one_line, with_retries};
use crate::grade::{KindKey, Observation};

/// The group-version-kind of a key (`apps/v1` → group `apps`, version `v1`).
pub fn gvk_of(key: &KindKey) -> GroupVersionKind {
    let (group, version) = match key.api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", key.api_version.as_str()),
    };
    GroupVersionKind::gvk(group, version, &key.kind)
}

/// Lists every object of `key` in every namespace, with apiVersion and kind set on each item.
pub async fn list_kind(client: &kube::Client, key: &KindKey) -> Result<Vec<Value>, kube::Error> {
    let gvk = gvk_of(key);
    let guessed = ApiResource::from_gvk(&gvk);
    let listed = list_with(client, &guessed).await;
    let items = match listed {
        Err(kube::Error::Api(status)) if status.code == 404 => {
            let (resource, _) = discovery::pinned_kind(client, &gvk).await?;
            list_with(client, &resource).await?
        }
        other => other?,
    };
    Ok(items
        .into_iter()
        .map(|item| {
            let mut value = serde_json::to_value(item).unwrap_or(Value::Null);
            if let Some(map) = value.as_object_mut() {
                map.insert("apiVersion".into(), Value::String(key.api_version.clone()));
                map.insert("kind".into(), Value::String(key.kind.clone()));
            }
            value
        })
        .collect())
}

/// Lists `resource` as raw JSON and reads the items one by one: an object whose metadata does
/// not decode (an ill-typed object stored before the server refused such writes, or by
/// another client) is left out with a warning instead of failing the whole kind.
async fn list_with(client: &kube::Client, resource: &ApiResource) -> Result<Vec<DynamicObject>, kube::Error> {
    let url = <DynamicObject as kube::Resource>::url_path(resource, None);
    let list: Value = with_retries(|| async {
        let request =
            kube::core::Request::new(&url).list(&ListParams::default()).map_err(kube::Error::BuildRequest)?;
        client.request::<Value>(request).await
    })
    .await?;
    let items = list.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok(items
        .iter()
        .filter_map(|item| match serde_json::from_value::<DynamicObject>(item.clone()) {
            Ok(object) => Some(object),
            Err(error) => {
                let name = item.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("?");
                tracing::warn!("skipping malformed {} {name:?}: {error}", resource.kind);
                None
            }
        })
        .collect())
}

/// Lists each kind once, concurrently; a kind that fails is left unobserved with its reason.
pub async fn observe(client: &kube::Client, kinds: &BTreeSet<KindKey>) -> Observation {
    let lists = futures::future::join_all(
        kinds.iter().map(|key| async move { (key.clone(), list_kind(client, key).await) }),
    )
    .await;
    let mut observation = Observation::default();
    for (key, listed) in lists {
        match listed {
            Ok(items) => observation.observed.insert(&key.api_version, &key.kind, items),
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
