//! The embedded simulated multi-node GPU cluster that real `kubectl` and `kube` talk to.

pub mod auth;
pub mod clock;
pub mod controllers;
pub mod crdvalidation;
pub mod cron;
pub mod gojson;
pub mod gpu;
pub mod harness;
pub mod kinds;
pub mod kubeconfig;
pub mod lifecycle;
pub mod owner_only;
pub mod registry;
pub mod resources;
pub mod server;
pub mod store;
pub mod tls;
pub mod topology;
