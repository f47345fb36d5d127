//! SelfSubjectReviews (authentication.k8s.io/v1): answered, never stored (`kubectl auth whoami`).
//!
//! The server answers a create (`server/authz.rs`), as pkg/registry/authentication/
//! selfsubjectreview/rest.go `Create` does: the caller's user info, nothing kept.

use crate::kinds::{CREATE_ONLY, Kind, Review, ReviewStrategy, Scope};

/// authentication.k8s.io/v1 `selfsubjectreviews` (GA and served by default since 1.28).
pub static KIND: Kind = Kind {
    group: "authentication.k8s.io",
    version: "v1",
    kind: "SelfSubjectReview",
    plural: "selfsubjectreviews",
    scope: Scope::Cluster,
    short_names: &[],
    categories: &[],
    verbs: CREATE_ONLY,
    subresources: &[],
    strategy: &ReviewStrategy(Review::Identity),
};
