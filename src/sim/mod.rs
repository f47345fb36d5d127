//! The embedded simulated multi-node GPU cluster that real `kubectl` and `kube` talk to.

pub mod clock;
pub mod harness;
pub mod resources;
pub mod server;
pub mod store;
