//! The lab bundle format: model, loader (file:line:col errors) and `labs list|show` text.
//!
//! Grading reads this layer, never the other way round: what the loader needs to know from
//! grading it asks through [`loader::Gradable`]; `lint` (which grades) is `crate::engine::lint`.

pub mod loader;
pub mod model;
pub mod show;

pub use self::{
    loader::{Bundle, BundleRoot, Problem},
    model::Lab,
};
