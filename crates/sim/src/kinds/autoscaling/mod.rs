//! autoscaling/v2, also served as autoscaling/v1: one file per kind, and the v1 conversion.

pub mod conversion;
pub mod horizontalpodautoscaler;
