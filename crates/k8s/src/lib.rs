//! Kubernetes semantics both the engine and the simulator need: quantities, selectors, conditions, taints, the kinds' schemas.

pub mod affinity;
pub mod cel;
pub mod condition;
pub mod daemon;
pub mod job;
pub mod normalize;
pub mod quantity;
pub mod quota_scope;
pub mod resources;
pub mod schedule;
pub mod schema;
pub mod selector;
pub mod taints;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
