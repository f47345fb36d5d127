//! `authorization.k8s.io/v1` SelfSubjectAccessReview and SelfSubjectRulesReview: what the
//! caller (the admin or the read-only viewer of `sim::auth`) may do, in RBAC's shape.
//!
//! Decisions come from [`auth::allowed`], the same function that guards every request, so a
//! review can never disagree with what the server then enforces. Reasons follow upstream's RBAC
//! authorizer (plugin/pkg/auth/authorizer/rbac/rbac.go `Authorize`): an allow names the binding
//! and role that allowed it; a denial is `NoOpinion` with an empty reason, so kubectl prints a
//! bare `no`.

use axum::{
    body::Body,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{
    request,
    status::{ApiError, Result},
};
use crate::{
    auth::{self, ADMIN_USER, Identity, RequestInfo, Role},
    registry::meta::timestamp,
    resources::ResourceType,
};

/// The group of the review types.
pub const GROUP: &str = "authorization.k8s.io";

/// The reviews the simulator answers: which kind is which review is its row's strategy
/// ([`kinds::Review`]); how each is answered is here.
pub use crate::kinds::Review;

/// The review served as `rt`, if it is one.
pub fn review_of(rt: &ResourceType) -> Option<Review> {
    crate::kinds::by_group_resource(&rt.group_resource()).and_then(|kind| kind.strategy.review())
}

/// The identity a request without one runs as: the in-process router (tests, `kube::Client`
/// over the tower service) has no authentication layer and may do everything.
const UNAUTHENTICATED: Identity = Identity { user: ADMIN_USER, role: Role::Admin };

/// Answers a POST of a review (201 with the review and its `status`); nothing is stored.
pub async fn create(
    review: Review,
    rt: &ResourceType,
    identity: Option<&Identity>,
    now: Timestamp,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let identity = identity.unwrap_or(&UNAUTHENTICATED);
    let bytes = request::read_body(headers, body).await?;
    let mut object = request::decode_object(headers, &bytes, &rt.kind)?;
    request::check_type(&object, &rt.api_version(), &rt.kind)?;
    object["apiVersion"] = json!(rt.api_version());
    object["kind"] = json!(rt.kind);
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    object["metadata"]["creationTimestamp"] = Value::Null;
    object["status"] = match review {
        Review::Access => access_status(identity, &object["spec"])?,
        Review::Rules => rules_status(identity),
        Review::Identity => {
            // selfsubjectreview/rest.go `Create` stamps the review with the time it answered.
            object["metadata"]["creationTimestamp"] = json!(timestamp(now));
            json!({"userInfo": {"username": identity.user, "groups": identity_groups(identity)}})
        }
    };
    Ok((StatusCode::CREATED, [(header::CONTENT_TYPE, "application/json")], object.to_string())
        .into_response())
}

/// The groups the simulator's authenticator gives a user: the admin's token is bound to
/// cluster-admin through `system:masters` as a kubeadm admin's certificate is, and every
/// authenticated user is in `system:authenticated` (the authenticator's `AuthenticatedGroupAdder`).
pub(crate) fn identity_groups(identity: &Identity) -> Vec<&'static str> {
    match identity.role {
        Role::Admin => vec!["system:masters", "system:authenticated"],
        Role::Viewer | Role::Learner => vec!["system:authenticated"],
        // The anonymous authenticator's group (`pkg/authentication/request/anonymous`).
        Role::Anonymous => vec!["system:unauthenticated"],
    }
}

/// The verbs RBAC knows, as the `&'static str` [`RequestInfo`] carries; anything else (`*`,
/// `use`, `escalate`…) only the admin holds.
fn known_verb(verb: &str) -> Option<&'static str> {
    ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
        .into_iter()
        .find(|known| *known == verb)
}

fn access_status(identity: &Identity, spec: &Value) -> Result<Value> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    let allowed = if let Some(attributes) = spec.get("resourceAttributes").filter(|a| a.is_object()) {
        let verb = text(&attributes["verb"]);
        match (identity.role, known_verb(&verb)) {
            (Role::Admin, _) => true,
            (_, None) => false,
            (_, Some(verb)) => auth::allowed(
                identity,
                &RequestInfo::Resource {
                    verb,
                    group: text(&attributes["group"]),
                    resource: text(&attributes["resource"]),
                    subresource: text(&attributes["subresource"]),
                    namespace: text(&attributes["namespace"]),
                    name: text(&attributes["name"]),
                },
            ),
        }
    } else if let Some(attributes) = spec.get("nonResourceAttributes").filter(|a| a.is_object()) {
        auth::allowed(
            identity,
            &RequestInfo::NonResource { verb: text(&attributes["verb"]), path: text(&attributes["path"]) },
        )
    } else {
        // validation.go ValidateSelfSubjectAccessReviewSpec.
        return Err(ApiError::invalid(
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
            json!({"group": GROUP, "kind": "SelfSubjectAccessReview", "causes": [{"reason": "FieldValueInvalid",
                "message": "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
                "field": "spec.resourceAttributes"}]}),
        ));
    };
    Ok(if allowed {
        json!({"allowed": true, "reason": allow_reason(identity)})
    } else {
        json!({"allowed": false})
    })
}

/// rbac.go: `RBAC: allowed by ClusterRoleBinding "<binding>" of ClusterRole "<role>" to User "<user>"`.
fn allow_reason(identity: &Identity) -> String {
    let (binding, role) = match identity.role {
        Role::Admin => ("lab-runner-admin", "cluster-admin"),
        Role::Viewer => ("lab-runner-viewer", "view"),
        Role::Learner => ("lab-runner-learner", "lab-runner:learner"),
        Role::Anonymous => ("system:public-info-viewer", "system:public-info-viewer"),
    };
    format!(
        "RBAC: allowed by ClusterRoleBinding \"{binding}\" of ClusterRole \"{role}\" to User \"{}\"",
        identity.user
    )
}

/// The rules of the caller's role (the same in every namespace), as `kubectl auth can-i --list`
/// prints them.
fn rules_status(identity: &Identity) -> Value {
    let reviews = json!({"verbs": ["create"], "apiGroups": [GROUP],
                         "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]});
    match identity.role {
        Role::Admin => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, reviews],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        Role::Viewer => json!({
            "resourceRules": [reviews, {"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["get", "head"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        // Its rules differ in the records' namespace, which one list cannot say: `incomplete`,
        // as upstream marks a list that does not hold every rule, and `auth can-i` per request.
        Role::Learner => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, reviews],
            "nonResourceRules": [{"verbs": ["get", "head"], "nonResourceURLs": ["*"]}],
            "incomplete": true,
        }),
        Role::Anonymous => json!({
            "resourceRules": [],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": crate::auth::PUBLIC_PATHS}],
            "incomplete": false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::VIEWER_USER;

    const VIEWER: Identity = Identity { user: VIEWER_USER, role: Role::Viewer };

    fn spec(verb: &str, group: &str, resource: &str) -> Value {
        json!({"resourceAttributes": {"namespace": "default", "verb": verb, "group": group, "resource": resource}})
    }

    #[test]
    fn the_viewer_may_read_and_review_only() {
        assert_eq!(access_status(&VIEWER, &spec("list", "apps", "daemonsets")).unwrap()["allowed"], true);
        assert_eq!(access_status(&VIEWER, &spec("create", "", "pods")).unwrap(), json!({"allowed": false}));
        assert_eq!(access_status(&VIEWER, &spec("*", "*", "*")).unwrap()["allowed"], false);
        assert_eq!(
            access_status(&VIEWER, &spec("create", GROUP, "selfsubjectaccessreviews")).unwrap()["allowed"],
            true
        );
        let healthz = json!({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}});
        assert_eq!(access_status(&VIEWER, &healthz).unwrap()["allowed"], true);
    }

    #[test]
    fn the_admin_may_do_everything() {
        let status = access_status(&UNAUTHENTICATED, &spec("*", "*", "*")).unwrap();
        assert_eq!(
            status["reason"],
            "RBAC: allowed by ClusterRoleBinding \"lab-runner-admin\" of ClusterRole \"cluster-admin\" to User \"lab-runner-admin\""
        );
        assert!(access_status(&UNAUTHENTICATED, &json!({})).is_err());
    }
}
