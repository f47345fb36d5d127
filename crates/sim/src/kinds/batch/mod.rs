//! batch/v1: one file per kind.

pub mod cronjob;
pub mod job;
