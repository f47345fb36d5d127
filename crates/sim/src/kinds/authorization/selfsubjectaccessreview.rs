//! SelfSubjectAccessReviews (authorization.k8s.io/v1): the row; answered, never stored.
//!
//! The server answers a create (`server/authz.rs`, what `kubectl auth can-i` posts).

use crate::kinds::{CREATE_ONLY, Kind, Review, ReviewStrategy, Scope};

/// authorization.k8s.io/v1 `selfsubjectaccessreviews`.
pub static KIND: Kind = Kind {
    group: "authorization.k8s.io",
    version: "v1",
    kind: "SelfSubjectAccessReview",
    plural: "selfsubjectaccessreviews",
    scope: Scope::Cluster,
    short_names: &[],
    categories: &[],
    verbs: CREATE_ONLY,
    subresources: &[],
    strategy: &ReviewStrategy(Review::Access),
};
