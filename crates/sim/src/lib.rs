//! The embedded simulated multi-node GPU cluster that real `kubectl` and `kube` talk to.
//!
//! Its own crate so the compiler holds the layers: it depends on `lab-runner-k8s` (the shared
//! Kubernetes semantics, named `k8s` here as in the main crate) and on nothing of the CLI, engine
//! or grading. What the main crate's code calls is few: `server` (the router and its state),
//! `store`, `clock`, `controllers`, `topology`, `tls`, `auth`, `kubeconfig`, `resources` and
//! `owner_only` for `sim serve` and the temporary simulators of `demo`, `selftest` and classes.
//! The other modules are public for the integration tests and benches; the tests' in-process
//! simulator and fixtures (`harness`) are behind the `test-support` feature. The process around
//! it (`sim up|down|status|serve`, whose errors a learner reads) is the main crate's
//! `sim::lifecycle`.

use lab_runner_k8s as k8s;

pub mod audit;
pub mod auth;
pub mod clock;
pub mod controllers;
pub mod crdvalidation;
pub mod cron;
pub mod gojson;
pub mod gpu;
#[cfg(any(test, feature = "test-support"))]
pub mod harness;
pub mod kinds;
pub mod kubeconfig;
pub mod metrics;
pub mod owner_only;
pub mod registry;
pub mod resources;
pub mod server;
pub mod store;
pub mod tls;
pub mod topology;

/// The stack of every thread that runs the simulator's request handlers and controllers. Go
/// grows a goroutine's stack as it needs; a Rust thread's is fixed, and client input may nest
/// [`gojson::MAX_NESTING_DEPTH`] levels deep, as upstream accepts, while decoding, patching,
/// admitting, storing, encoding and dropping it recurse once per level. The deepest of these at
/// that depth fits in a quarter of this in a debug build (test
/// `sim_transport::deep_inputs_fit_the_handler_stack`); a release build needs less. YAML is
/// decoded on a segment of its own ([`server::request::YAML_STACK_BYTES`]). Only the pages a
/// deep request touches are committed.
pub const THREAD_STACK_BYTES: usize = 192 << 20;
