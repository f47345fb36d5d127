//! autoscaling/v2: one file per kind.

pub mod horizontalpodautoscaler;
