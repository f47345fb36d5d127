//! `lab-runner`: runs the hands-on labs of a Kubernetes GPU-sharing course and grades them.
//!
//! Layers (docs/architecture.md): [`cli`] resolves arguments into a [`session::Session`] of
//! domain types (language, cluster target, lab source) and each command's options;
//! [`commands`] runs them, one module per command; [`engine`] runs
//! `start`/`check`/`reset` against any cluster through `kube`; [`lab`] loads and lints lab
//! bundles; [`grade`] matches observed objects against expectations; [`report`] renders results;
//! [`k8s`] holds Kubernetes semantics shared by the engine and the simulator; [`sim`] is the
//! embedded simulated GPU cluster, which only the commands and tests import. Both are crates of
//! their own (`crates/k8s`, `crates/sim`), re-exported here under these names.

pub mod class;
pub mod cli;
pub mod commands;
pub mod engine;
pub mod exit;
pub mod grade;
pub mod i18n;
pub use lab_runner_k8s as k8s;
pub mod lab;
pub mod report;
pub mod session;
pub mod sim;
