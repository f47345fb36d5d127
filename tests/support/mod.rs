//! Fixtures the integration tests share: the built binary, the kubectl clients, a simulator on a socket, transcripts.
//!
//! One module per kind of fixture; a new kind (a container fixture, say) is one more `pub mod`
//! line here, so test files import setup instead of copying it from each other.

pub mod binary;
pub mod chromium;
pub mod container;
pub mod docs;
pub mod http;
pub mod kubectl;
pub mod python;
pub mod sim;
pub mod transcript;
pub mod tree;
