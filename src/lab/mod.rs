//! The lab bundle format: model, loader (file:line:col errors) and lint.
