//! GPU emulation: hardware and MIG tables, the NVIDIA device plugin with its config-manager,
//! GPU Feature Discovery and the MIG manager, as pure state the simulated kubelet drives
//! (described in `docs/gpu.md`).

pub mod advertise;
pub mod agent;
pub mod config;
pub mod gfd;
pub mod hardware;
pub mod mig;
pub mod plugin;
