//! `lab-runner`: runs the hands-on labs of a Kubernetes GPU-sharing course and grades them.
//!
//! Layers (DESIGN §3): [`cli`] resolves arguments into a [`cli::Session`] of domain types
//! ([`session`]: language, cluster target, lab source); [`engine`] runs
//! `start`/`check`/`reset` against any cluster through `kube`; [`lab`] loads and lints lab
//! bundles; [`grade`] matches observed objects against expectations; [`report`] renders results;
//! [`k8s`] holds Kubernetes semantics shared by the engine and the simulator; [`sim`] is the
//! embedded simulated GPU cluster, which only the CLI and tests import.

pub mod class;
pub mod cli;
pub mod demo;
pub mod engine;
pub mod exit;
pub mod grade;
pub mod i18n;
pub mod k8s;
pub mod lab;
pub mod report;
pub mod run;
pub mod session;
pub mod sim;
pub mod sim_command;
