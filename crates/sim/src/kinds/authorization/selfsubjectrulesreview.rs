//! SelfSubjectRulesReviews (authorization.k8s.io/v1): the row; answered, never stored.
//!
//! The server answers a create (`server/authz.rs`).

use crate::kinds::{CREATE_ONLY, Kind, Review, ReviewStrategy, Scope};

/// authorization.k8s.io/v1 `selfsubjectrulesreviews`.
pub static KIND: Kind = Kind {
    group: "authorization.k8s.io",
    version: "v1",
    kind: "SelfSubjectRulesReview",
    plural: "selfsubjectrulesreviews",
    scope: Scope::Cluster,
    short_names: &[],
    categories: &[],
    verbs: CREATE_ONLY,
    subresources: &[],
    strategy: &ReviewStrategy(Review::Rules),
};
