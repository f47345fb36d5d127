//! ClusterRoles (rbac.authorization.k8s.io/v1): the row; names are path segments.
//!
//! Stored only: the admin/viewer tokens decide access (docs/simulator.md). No printer upstream.

use crate::kinds::{ALL_VERBS, Kind, NameRule, Scope, Strategy};

/// rbac.authorization.k8s.io/v1 `clusterroles`.
///
/// Stored only: the admin/viewer tokens decide access, never these objects (docs/simulator.md).
pub static KIND: Kind = Kind {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    scope: Scope::Cluster,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &ClusterRoleStrategy,
};

/// The ClusterRole strategy.
#[derive(Debug)]
pub struct ClusterRoleStrategy;

impl Strategy for ClusterRoleStrategy {
    /// rbac `ValidateRBACName`: a path segment.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }
}
