//! Fixtures shared by the integration tests.

pub mod container;
