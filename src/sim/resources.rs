//! The resource types the simulator serves: group, version, kind, plural, scope, short names.
//!
//! One table feeds discovery (legacy and aggregated), URL routing, tables and the store. Values
//! are upstream's as `kubectl api-resources` prints them on a 1.33 cluster.

/// Whether objects of a type live in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `/api/v1/namespaces/{ns}/pods/{name}`.
    Namespaced,
    /// `/api/v1/nodes/{name}`.
    Cluster,
}

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

    /// True for `namespaced` scope.
    pub fn namespaced(&self) -> bool {
        self.scope == Scope::Namespaced
    }
}

const ALL_VERBS: &[&str] =
    &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const CREATE_ONLY: &[&str] = &["create"];

struct Row {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    scope: Scope,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    verbs: &'static [&'static str],
    subresources: &'static [&'static str],
}

use Scope::{Cluster, Namespaced};

// Source: `kubectl api-resources -o wide` on a v1.33 kube-apiserver (short names, categories,
// verbs); namespaces lack `deletecollection` upstream.
const BUILT_IN: &[Row] = &[
    Row {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        scope: Cluster,
        short_names: &["ns"],
        categories: &[],
        verbs: &["create", "delete", "get", "list", "patch", "update", "watch"],
        subresources: &["status", "finalize"],
    },
    Row {
        group: "",
        version: "v1",
        kind: "Node",
        plural: "nodes",
        scope: Cluster,
        short_names: &["no"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "",
        version: "v1",
        kind: "Pod",
        plural: "pods",
        scope: Namespaced,
        short_names: &["po"],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status", "log", "exec", "binding", "eviction"],
    },
    Row {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        scope: Namespaced,
        short_names: &["cm"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    Row {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
        scope: Namespaced,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    Row {
        group: "",
        version: "v1",
        kind: "Service",
        plural: "services",
        scope: Namespaced,
        short_names: &["svc"],
        categories: &["all"],
        verbs: &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        subresources: &["status"],
    },
    Row {
        group: "",
        version: "v1",
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        scope: Namespaced,
        short_names: &["sa"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    Row {
        group: "",
        version: "v1",
        kind: "Event",
        plural: "events",
        scope: Namespaced,
        short_names: &["ev"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    // Stored only: no volume is provisioned or bound, so a claim stays Pending (docs/simulator.md).
    Row {
        group: "",
        version: "v1",
        kind: "PersistentVolumeClaim",
        plural: "persistentvolumeclaims",
        scope: Namespaced,
        short_names: &["pvc"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "",
        version: "v1",
        kind: "ResourceQuota",
        plural: "resourcequotas",
        scope: Namespaced,
        short_names: &["quota"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "",
        version: "v1",
        kind: "LimitRange",
        plural: "limitranges",
        scope: Namespaced,
        short_names: &["limits"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    Row {
        group: "apps",
        version: "v1",
        kind: "DaemonSet",
        plural: "daemonsets",
        scope: Namespaced,
        short_names: &["ds"],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        scope: Namespaced,
        short_names: &["deploy"],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status", "scale"],
    },
    Row {
        group: "apps",
        version: "v1",
        kind: "ReplicaSet",
        plural: "replicasets",
        scope: Namespaced,
        short_names: &["rs"],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status", "scale"],
    },
    Row {
        group: "apps",
        version: "v1",
        kind: "StatefulSet",
        plural: "statefulsets",
        scope: Namespaced,
        short_names: &["sts"],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status", "scale"],
    },
    // autoscaling/v2 only: kube-apiserver also serves autoscaling/v1 (kubectl 1.32's `autoscale`
    // posts v1), which would need a v1 <-> v2 conversion the store does not have
    // (docs/simulator.md). No metrics API is served, so the controller never has metrics.
    Row {
        group: "autoscaling",
        version: "v2",
        kind: "HorizontalPodAutoscaler",
        plural: "horizontalpodautoscalers",
        scope: Namespaced,
        short_names: &["hpa"],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "apps",
        version: "v1",
        kind: "ControllerRevision",
        plural: "controllerrevisions",
        scope: Namespaced,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    Row {
        group: "batch",
        version: "v1",
        kind: "Job",
        plural: "jobs",
        scope: Namespaced,
        short_names: &[],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "batch",
        version: "v1",
        kind: "CronJob",
        plural: "cronjobs",
        scope: Namespaced,
        short_names: &["cj"],
        categories: &["all"],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "policy",
        version: "v1",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        scope: Namespaced,
        short_names: &["pdb"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "events.k8s.io",
        version: "v1",
        kind: "Event",
        plural: "events",
        scope: Namespaced,
        short_names: &["ev"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    Row {
        group: "coordination.k8s.io",
        version: "v1",
        kind: "Lease",
        plural: "leases",
        scope: Namespaced,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    Row {
        group: "apiextensions.k8s.io",
        version: "v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        scope: Cluster,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        verbs: ALL_VERBS,
        subresources: &["status"],
    },
    Row {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "SelfSubjectAccessReview",
        plural: "selfsubjectaccessreviews",
        scope: Cluster,
        short_names: &[],
        categories: &[],
        verbs: CREATE_ONLY,
        subresources: &[],
    },
    Row {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "SelfSubjectRulesReview",
        plural: "selfsubjectrulesreviews",
        scope: Cluster,
        short_names: &[],
        categories: &[],
        verbs: CREATE_ONLY,
        subresources: &[],
    },
    // Resolved into pods' `spec.priority` by the Priority admission plugin (kind_admission.rs).
    Row {
        group: "scheduling.k8s.io",
        version: "v1",
        kind: "PriorityClass",
        plural: "priorityclasses",
        scope: Cluster,
        short_names: &["pc"],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    // Looked up by the RuntimeClass admission plugin (kind_admission.rs).
    Row {
        group: "node.k8s.io",
        version: "v1",
        kind: "RuntimeClass",
        plural: "runtimeclasses",
        scope: Cluster,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    // Stored only: the admin/viewer tokens decide access, never these objects (docs/simulator.md).
    Row {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRoleBinding",
        plural: "clusterrolebindings",
        scope: Cluster,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    // Stored only: the admin/viewer tokens decide access, never these objects (docs/simulator.md).
    Row {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRole",
        plural: "clusterroles",
        scope: Cluster,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    // Stored only: the admin/viewer tokens decide access, never these objects (docs/simulator.md).
    Row {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "RoleBinding",
        plural: "rolebindings",
        scope: Namespaced,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
    // Stored only: the admin/viewer tokens decide access, never these objects (docs/simulator.md).
    Row {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "Role",
        plural: "roles",
        scope: Namespaced,
        short_names: &[],
        categories: &[],
        verbs: ALL_VERBS,
        subresources: &[],
    },
];

/// Whether `group`/`plural` is a built-in type, read from the static table without building
/// [`built_in`] (asked for every watch event and write that could be of a custom type).
///
/// ```
/// use lab_runner::sim::resources::is_built_in;
/// assert!(is_built_in("apps", "daemonsets"));
/// assert!(!is_built_in("example.com", "widgets"));
/// ```
pub fn is_built_in(group: &str, plural: &str) -> bool {
    BUILT_IN.iter().any(|row| row.group == group && row.plural == plural)
}

/// The built-in resource types, in discovery order.
pub fn built_in() -> Vec<ResourceType> {
    BUILT_IN
        .iter()
        .map(|row| ResourceType {
            group: row.group.to_string(),
            version: row.version.to_string(),
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
