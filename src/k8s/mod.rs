//! Kubernetes semantics both the engine and the simulator need: quantities, selectors, taints.

pub mod quantity;
pub mod selector;
