//! Kubernetes semantics both the engine and the simulator need: quantities, selectors, taints.

pub mod affinity;
pub mod daemon;
pub mod normalize;
pub mod quantity;
pub mod resources;
pub mod schedule;
pub mod selector;
pub mod taints;
