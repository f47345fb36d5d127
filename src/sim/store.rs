//! Objects, a monotonic revision (= resourceVersion) and watch history, durable in SQLite.
//!
//! (Skeleton: filled in by the simulated cluster A work.)

/// The simulator's object store.
#[derive(Debug, Default)]
pub struct Store {}
