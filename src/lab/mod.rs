//! The lab bundle format: model, loader (file:line:col errors), lint, and `labs list|show` text.

pub mod lint;
pub mod loader;
pub mod model;
pub mod show;

pub use self::{
    loader::{Bundle, BundleRoot, Problem},
    model::Lab,
};
