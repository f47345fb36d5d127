//! RoleBindings (rbac.authorization.k8s.io/v1): the row and the printer.
//!
//! Stored only: the admin/viewer tokens decide access (docs/simulator.md).

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Kind, NameRule, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, text},
};

/// rbac.authorization.k8s.io/v1 `rolebindings`.
///
/// Stored only: the admin/viewer tokens decide access, never these objects (docs/simulator.md).
pub static KIND: Kind = Kind {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "RoleBinding",
    plural: "rolebindings",
    scope: Scope::Namespaced,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &RoleBindingStrategy,
};

/// The RoleBinding strategy.
#[derive(Debug)]
pub struct RoleBindingStrategy;

impl Strategy for RoleBindingStrategy {
    /// rbac `ValidateRBACName`: a path segment.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

// Role and ClusterRole have no printer upstream: the default convertor's Name, Created At.
// pkg/printers/internalversion/printers.go roleBindingsColumnDefinitions and
// clusterRoleBindingsColumnDefinitions, printRoleBinding/printClusterRoleBinding.
#[rustfmt::skip]
static PRINTER: Printer = Printer { row: binding_row, columns: &[
    NAME,
    Column("Role", "string", 0, "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable."),
    AGE,
    Column("Users", "string", 1, "Users in the roleBinding"),
    Column("Groups", "string", 1, "Groups in the roleBinding"),
    Column("ServiceAccounts", "string", 1, "ServiceAccounts in the roleBinding"),
] };

/// `printRoleBinding`/`printClusterRoleBinding`: the role as `Kind/name`, then (wide) the subjects
/// split by `rbac.SubjectsStrings` (pkg/apis/rbac/helpers.go): users, groups, and service
/// accounts as `namespace/name`, each list joined with `, `.
pub(crate) fn binding_row(binding: &Value, now: Ages) -> Vec<Value> {
    let role = format!("{}/{}", text(&binding["roleRef"]["kind"]), text(&binding["roleRef"]["name"]));
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in binding["subjects"].as_array().into_iter().flatten() {
        let name = text(&subject["name"]);
        match text(&subject["kind"]) {
            "User" => users.push(name.to_string()),
            "Group" => groups.push(name.to_string()),
            "ServiceAccount" => accounts.push(format!("{}/{name}", text(&subject["namespace"]))),
            _ => {}
        }
    }
    vec![
        binding["metadata"]["name"].clone(),
        json!(role),
        age(binding, now),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(accounts.join(", ")),
    ]
}
