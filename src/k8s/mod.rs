//! Kubernetes semantics both the engine and the simulator need: quantities, selectors, taints.

pub mod normalize;
pub mod quantity;
