//! node.k8s.io/v1: one file per kind.

pub mod runtimeclass;
