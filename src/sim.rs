//! The embedded simulated GPU cluster: the `lab-runner-sim` crate, and its lifecycle as a process of this binary.
//!
//! Everything of `crates/sim` is re-exported here, so `crate::sim::server` and
//! `lab_runner::sim::store` name the crate's modules. [`lifecycle`] (`sim up|down|status|serve`)
//! lives in this crate: it re-executes this binary and renders its errors in the learner's
//! language through the message catalog, which the simulator crate does not know.

pub use lab_runner_sim::*;

pub mod lifecycle;
