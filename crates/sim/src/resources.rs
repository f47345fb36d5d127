//! The resource types the simulator serves: group, version, kind, plural, scope, short names.
//!
//! The built-in ones are the rows of `kinds::BUILT_IN`, the table that also feeds discovery
//! (legacy and aggregated), URL routing, tables, OpenAPI and the store; custom ones come from
//! established CRDs (`server::crd`).

use super::kinds;

pub use super::kinds::Scope;

/// One served resource type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group; `""` for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `DaemonSet`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `daemonsets`.
    pub plural: String,
    /// Singular resource name, e.g. `daemonset`.
    pub singular: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// Short names kubectl accepts (`ds`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Verbs on the collection and objects.
    pub verbs: Vec<String>,
    /// Subresources served, e.g. `status`, `log`, `scale`.
    pub subresources: Vec<String>,
}

impl ResourceType {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// `DaemonSetList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The URL prefix of the group-version: `/api/v1` or `/apis/apps/v1`.
    pub fn group_version_path(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        }
    }

    /// `daemonsets.apps`, the name kubectl and Status details use for the group-resource.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// `deployments/scale.apps`: the group-resource upstream's `ScaleREST` names in its errors.
    pub fn scale_group_resource(&self) -> String {
        format!("{}/scale.{}", self.plural, self.group)
    }

    /// The registry strategy objects of this type are written with (`kinds::strategy`).
    pub fn strategy(&self) -> &'static dyn kinds::Strategy {
        kinds::strategy(&self.group_resource())
    }

    /// True for `namespaced` scope.
    pub fn namespaced(&self) -> bool {
        self.scope == Scope::Namespaced
    }
}

/// Whether `group`/`plural` is a built-in type, read from the static table without building
/// [`built_in`] (asked for every watch event and write that could be of a custom type).
///
/// ```
/// use lab_runner_sim::resources::is_built_in;
/// assert!(is_built_in("apps", "daemonsets"));
/// assert!(!is_built_in("example.com", "widgets"));
/// ```
pub fn is_built_in(group: &str, plural: &str) -> bool {
    kinds::find(group, plural).is_some()
}

/// The built-in resource types, in discovery order.
pub fn built_in() -> Vec<ResourceType> {
    kinds::BUILT_IN
        .iter()
        .flat_map(|row| {
            let also = kinds::ALSO_SERVED.iter().filter(|(kind, _)| std::ptr::eq(*kind, *row));
            std::iter::once((*row, row.version)).chain(also.map(|(kind, version)| (*kind, *version)))
        })
        .map(|(row, version)| ResourceType {
            group: row.group.to_string(),
            version: version.to_string(),
            kind: row.kind.to_string(),
            plural: row.plural.to_string(),
            singular: row.kind.to_lowercase(),
            scope: row.scope,
            short_names: row.short_names.iter().map(|s| s.to_string()).collect(),
            categories: row.categories.iter().map(|s| s.to_string()).collect(),
            verbs: row.verbs.iter().map(|s| s.to_string()).collect(),
            subresources: row.subresources.iter().map(|s| s.to_string()).collect(),
        })
        .collect()
}

/// Finds the type served at `group`/`version`/`plural`.
pub fn find<'a>(
    types: &'a [ResourceType],
    group: &str,
    version: &str,
    plural: &str,
) -> Option<&'a ResourceType> {
    types.iter().find(|t| t.group == group && t.version == version && t.plural == plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_names_follow_upstream() {
        let types = built_in();
        let ds = find(&types, "apps", "v1", "daemonsets").unwrap();
        assert_eq!(ds.api_version(), "apps/v1");
        assert_eq!(ds.group_version_path(), "/apis/apps/v1");
        assert_eq!(ds.group_resource(), "daemonsets.apps");
        assert_eq!(ds.list_kind(), "DaemonSetList");
        let quota = find(&types, "", "v1", "resourcequotas").unwrap();
        assert_eq!(quota.singular, "resourcequota");
        assert_eq!(quota.group_version_path(), "/api/v1");
        assert!(!find(&types, "", "v1", "nodes").unwrap().namespaced());
    }
}
