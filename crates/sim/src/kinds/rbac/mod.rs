//! rbac.authorization.k8s.io/v1: one file per kind.

pub mod clusterrole;
pub mod clusterrolebinding;
pub mod role;
pub mod rolebinding;
