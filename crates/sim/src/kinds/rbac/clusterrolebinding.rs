//! ClusterRoleBindings (rbac.authorization.k8s.io/v1): the row and the printer.
//!
//! Stored only: the admin/viewer tokens decide access (docs/simulator.md).

use crate::kinds::{
    ALL_VERBS, Kind, NameRule, Scope, Strategy,
    printer::{AGE, Column, NAME, Printer},
};

/// rbac.authorization.k8s.io/v1 `clusterrolebindings`.
///
/// Stored only: the admin/viewer tokens decide access, never these objects (docs/simulator.md).
pub static KIND: Kind = Kind {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    scope: Scope::Cluster,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &ClusterRoleBindingStrategy,
};

/// The ClusterRoleBinding strategy.
#[derive(Debug)]
pub struct ClusterRoleBindingStrategy;

impl Strategy for ClusterRoleBindingStrategy {
    /// rbac `ValidateRBACName`: a path segment.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: super::rolebinding::binding_row, columns: &[
    NAME,
    Column("Role", "string", 0, "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable."),
    AGE,
    Column("Users", "string", 1, "Users in the clusterRoleBinding"),
    Column("Groups", "string", 1, "Groups in the clusterRoleBinding"),
    Column("ServiceAccounts", "string", 1, "ServiceAccounts in the clusterRoleBinding"),
] };
