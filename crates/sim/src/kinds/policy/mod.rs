//! policy/v1: one file per kind.

pub mod poddisruptionbudget;
