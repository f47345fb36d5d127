//! Bearer-token authentication and the read-only viewer's authorization, as a layer around the
//! (auth-free) router.
//!
//! Three tokens live in the state directory: the admin token (may do everything), the viewer
//! token (may only get/list/watch, plus the self-reviews every authenticated user may create, as
//! upstream's `system:basic-user` grants), and the learner token a hosted class hands out: admin
//! of the cluster except the namespace lab-runner keeps a lab's records in ([`RECORDS_NAMESPACE`]),
//! where it may read ConfigMaps and create them (a quiz answer is one entry) but change nothing,
//! read no Secret (the key the records are sealed with), and the simulator's own extensions
//! (checkpoints). Requests are classified the way kube-apiserver's
//! `RequestInfoFactory` does (staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go)
//! and refusals carry upstream's texts (apiserver/pkg/endpoints/handlers/responsewriters/errors.go
//! `forbiddenMessage`; apimachinery/pkg/api/errors/errors.go `NewForbidden`).

use std::{
    fs,
    path::{Path, PathBuf},
    sync::Arc,
};

use axum::{
    Router,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{Value, json};

use super::tls::write_private_file;

/// The admin token's file in the state directory.
pub const ADMIN_TOKEN_FILE: &str = "admin.token";
/// The viewer token's file in the state directory.
pub const VIEWER_TOKEN_FILE: &str = "viewer.token";
/// The learner token's file in the state directory.
pub const LEARNER_TOKEN_FILE: &str = "learner.token";
/// The user name requests with the learner token run as.
pub const LEARNER_USER: &str = "lab-runner-learner";
/// The namespace lab-runner keeps a lab's records in (its inventory, the key it is sealed with,
/// a hosted class's answer entries): the one namespace a learner's credentials cannot write.
pub const RECORDS_NAMESPACE: &str = "lab-runner";
/// The user name requests with the admin token run as.
pub const ADMIN_USER: &str = "lab-runner-admin";
/// The user name requests with the viewer token run as.
pub const VIEWER_USER: &str = "lab-runner-viewer";

/// Errors loading or making tokens.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A token file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The system's random number generator failed.
    #[error("cannot generate a token: the system random number generator failed")]
    Random,
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a token allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Everything.
    Admin,
    /// get, list and watch only.
    Viewer,
    /// A hosted class's learner: everything but the lab's records.
    Learner,
    /// No token: the health endpoints only.
    Anonymous,
}

/// The user a request without a token runs as.
pub const ANONYMOUS_USER: &str = "system:anonymous";

/// The paths a request without a token may read: kube-apiserver's anonymous authentication
/// limited to the health endpoints (AuthenticationConfiguration `anonymous.conditions`,
/// KEP-4633), which the default RBAC's `system:public-info-viewer` authorizes for everyone.
pub const PUBLIC_PATHS: &[&str] = &["/healthz", "/livez", "/readyz"];

/// Who a request runs as; inserted into the request's extensions for handlers (e.g. the
/// SelfSubjectAccessReview handler) to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The user name, as upstream's messages print it.
    pub user: &'static str,
    /// What the user may do.
    pub role: Role,
}

/// The simulator's two bearer tokens.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// The admin token.
    pub admin: String,
    /// The read-only viewer token.
    pub viewer: String,
    /// The learner token a hosted class hands out.
    pub learner: String,
}

/// 24 random bytes as hex: a bearer token nobody can guess (the class board's too).
pub fn random_token() -> Result<String> {
    let mut bytes = [0u8; 24];
    SystemRandom::new().fill(&mut bytes).map_err(|_| Error::Random)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn load_or_make(path: &Path) -> Result<String> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    match fs::read_to_string(path) {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_string()),
        Ok(_) => make(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => make(path),
        Err(e) => Err(io(e)),
    }
}

fn make(path: &Path) -> Result<String> {
    let token = random_token()?;
    write_private_file(path, format!("{token}\n").as_bytes())
        .map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    Ok(token)
}

/// Constant-time comparison, so a token cannot be guessed byte by byte from response times.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Tokens {
    /// Reads the tokens from `dir`, making (and storing, mode 0600) any that are missing.
    pub fn load_or_create(dir: &Path) -> Result<Tokens> {
        Ok(Tokens {
            admin: load_or_make(&dir.join(ADMIN_TOKEN_FILE))?,
            viewer: load_or_make(&dir.join(VIEWER_TOKEN_FILE))?,
            learner: load_or_make(&dir.join(LEARNER_TOKEN_FILE))?,
        })
    }

    /// Who presents `token`, if anyone.
    pub fn identify(&self, token: &str) -> Option<Identity> {
        if same(token, &self.admin) {
            Some(Identity { user: ADMIN_USER, role: Role::Admin })
        } else if same(token, &self.viewer) {
            Some(Identity { user: VIEWER_USER, role: Role::Viewer })
        } else if same(token, &self.learner) {
            Some(Identity { user: LEARNER_USER, role: Role::Learner })
        } else {
            None
        }
    }
}

/// A request classified as kube-apiserver's `RequestInfoFactory` classifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestInfo {
    /// `/version`, `/api`, `/apis/apps/v1`, `/openapi/v3`…
    NonResource {
        /// Lower-cased HTTP method (`get`, `post`).
        verb: String,
        /// The URL path.
        path: String,
    },
    /// An API resource request.
    Resource {
        /// get, list, watch, create, update, patch, delete, deletecollection.
        verb: &'static str,
        /// API group, `""` for core.
        group: String,
        /// Plural resource.
        resource: String,
        /// Subresource, e.g. `status`.
        subresource: String,
        /// Namespace, `""` at the cluster scope.
        namespace: String,
        /// Object name, `""` for collections.
        name: String,
    },
}

/// Classifies `method` + `path` (+ the `watch` query parameter) (requestinfo.go `NewRequestInfo`).
pub fn classify(method: &str, path: &str, query: Option<&str>) -> RequestInfo {
    let non_resource =
        || RequestInfo::NonResource { verb: method.to_ascii_lowercase(), path: path.to_string() };
    let parts: Vec<&str> = path.trim_matches('/').split('/').filter(|p| !p.is_empty()).collect();
    let (group, rest) = match parts.as_slice() {
        ["api", _version, rest @ ..] if !rest.is_empty() => ("", rest),
        ["apis", group, _version, rest @ ..] if !rest.is_empty() => (*group, rest),
        _ => return non_resource(),
    };
    let mut namespace = "";
    let mut current: &[&str] = rest;
    if current[0] == "namespaces" && current.len() > 1 {
        namespace = current[1];
        // requestinfo.go: "finalize" and "status" after a namespace name are its subresources.
        if current.len() > 2 && !matches!(current[2], "finalize" | "status") {
            current = &current[2..];
        }
    }
    let resource = current[0].to_string();
    let name = current.get(1).copied().unwrap_or("").to_string();
    let subresource = current.get(2).copied().unwrap_or("").to_string();
    let watch =
        query.unwrap_or("").split('&').any(|pair| matches!(pair, "watch=true" | "watch=1" | "watch=True"));
    let verb = match (method, name.is_empty()) {
        ("GET" | "HEAD", _) if watch => "watch",
        ("GET" | "HEAD", true) => "list",
        ("GET" | "HEAD", false) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "deletecollection",
        ("DELETE", false) => "delete",
        _ => return non_resource(),
    };
    RequestInfo::Resource {
        verb,
        group: group.to_string(),
        resource,
        subresource,
        namespace: namespace.to_string(),
        name,
    }
}

/// Whether `identity` may make the request `info`.
pub fn allowed(identity: &Identity, info: &RequestInfo) -> bool {
    match (identity.role, info) {
        (Role::Admin, _) => true,
        (Role::Anonymous, RequestInfo::NonResource { verb, path }) => {
            verb == "get" && PUBLIC_PATHS.contains(&path.as_str())
        }
        (Role::Anonymous, RequestInfo::Resource { .. }) => false,
        // system:discovery and system:public-info-viewer let everyone read these paths; the
        // metrics are for system:monitoring, which the viewer is not.
        (Role::Viewer, RequestInfo::NonResource { verb, path }) => {
            (verb == "get" || verb == "head") && path != "/metrics"
        }
        (Role::Viewer, RequestInfo::Resource { verb, group, resource, .. }) => {
            matches!(*verb, "get" | "list" | "watch")
                // system:basic-user: every user may review its own access.
                || (*verb == "create"
                    && group == "authorization.k8s.io"
                    && matches!(resource.as_str(), "selfsubjectaccessreviews" | "selfsubjectrulesreviews"))
                || (*verb == "create" && group == "authentication.k8s.io" && resource == "selfsubjectreviews")
        }
        // The simulator's own extensions (checkpoints of the whole store) are not the learner's.
        (Role::Learner, RequestInfo::NonResource { path, .. }) => !path.starts_with("/lab-runner.io/"),
        (Role::Learner, RequestInfo::Resource { verb, group, resource, namespace, name, .. }) => {
            let core = group.is_empty();
            if namespace == RECORDS_NAMESPACE {
                // Read the records, add an answer entry; change, delete or read a Secret: never.
                core && resource == "configmaps" && matches!(*verb, "get" | "list" | "watch" | "create")
            } else if core && resource == "namespaces" && name == RECORDS_NAMESPACE {
                matches!(*verb, "get" | "list" | "watch")
            } else {
                // Across every namespace, Secrets would include the records' key.
                !(namespace.is_empty() && core && resource == "secrets" && matches!(*verb, "list" | "watch"))
                    && !(namespace.is_empty()
                        && core
                        && resource == "configmaps"
                        && *verb == "deletecollection")
            }
        }
    }
}

/// The 403 `Status` upstream returns for a request RBAC denies.
pub fn forbidden_status(user: &str, info: &RequestInfo) -> Value {
    match info {
        RequestInfo::NonResource { verb, path } => {
            let message = format!("forbidden: User \"{user}\" cannot {verb} path \"{path}\"");
            status_body(403, "Forbidden", &message, json!({}))
        }
        RequestInfo::Resource { verb, group, resource, subresource, namespace, name } => {
            let shown =
                if subresource.is_empty() { resource.clone() } else { format!("{resource}/{subresource}") };
            let reason = if namespace.is_empty() {
                format!(
                    "User \"{user}\" cannot {verb} resource \"{shown}\" in API group \"{group}\" at the cluster scope"
                )
            } else {
                format!(
                    "User \"{user}\" cannot {verb} resource \"{shown}\" in API group \"{group}\" in the namespace \"{namespace}\""
                )
            };
            let qualified = if group.is_empty() { resource.clone() } else { format!("{resource}.{group}") };
            let message = if name.is_empty() {
                format!("{qualified} is forbidden: {reason}")
            } else {
                format!("{qualified} \"{name}\" is forbidden: {reason}")
            };
            let mut details = json!({"group": group, "kind": resource});
            if !name.is_empty() {
                details["name"] = json!(name);
            }
            status_body(403, "Forbidden", &message, details)
        }
    }
}

fn status_body(code: u16, reason: &str, message: &str, details: Value) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if details.as_object().is_some_and(|d| !d.is_empty()) {
        status["details"] = details;
    }
    status
}

fn respond(code: StatusCode, body: &Value) -> Response {
    let mut response = (code, body.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The token of an `Authorization` header value, as apiserver's
/// `pkg/authentication/request/bearertoken/bearertoken.go` reads it: the value trimmed, split on
/// single spaces into at most three parts, the scheme compared case-insensitively (`bearer` is
/// as good as `Bearer`), the token the second part (empty, e.g. after a double space: none).
pub fn bearer_token(authorization: &str) -> Option<&str> {
    let mut parts = authorization.trim().splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The middleware: 401 without a known bearer token, 403 for what the user may not do, else the
/// request goes on with its [`Identity`] in the extensions.
pub async fn require_token(State(tokens): State<Arc<Tokens>>, mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token);
    let anonymous = presented.is_none()
        && request.headers().get(header::AUTHORIZATION).is_none()
        && request.method() == axum::http::Method::GET
        && PUBLIC_PATHS.contains(&request.uri().path());
    let identity = match presented.and_then(|token| tokens.identify(token)) {
        Some(identity) => Some(identity),
        None if anonymous => Some(Identity { user: ANONYMOUS_USER, role: Role::Anonymous }),
        None => None,
    };
    let Some(identity) = identity else {
        // Upstream's body for a failed authentication (apiserver/pkg/endpoints/handlers/
        // responsewriters/errors.go via authentication's unauthorized handler).
        return respond(
            StatusCode::UNAUTHORIZED,
            &status_body(401, "Unauthorized", "Unauthorized", json!({})),
        );
    };
    let info = classify(request.method().as_str(), request.uri().path(), request.uri().query());
    // The response carries who made the request too, for the audit log around this layer.
    if !allowed(&identity, &info) {
        let mut refused = respond(StatusCode::FORBIDDEN, &forbidden_status(identity.user, &info));
        refused.extensions_mut().insert(identity);
        return refused;
    }
    request.extensions_mut().insert(identity.clone());
    let mut response = next.run(request).await;
    response.extensions_mut().insert(identity);
    response
}

/// Wraps the router in the token layer; what `sim serve` serves.
pub fn layer(router: Router, tokens: Arc<Tokens>) -> Router {
    router.layer(axum::middleware::from_fn_with_state(tokens, require_token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive_as_upstream_reads_it() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER abc"), Some("abc"));
        assert_eq!(bearer_token("  Bearer abc  "), Some("abc"));
        assert_eq!(bearer_token("Bearer abc extra"), Some("abc"));
        assert_eq!(bearer_token("Bearer  abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearerabc"), None);
    }

    fn resource(info: RequestInfo) -> (String, String, String, String, String, String) {
        match info {
            RequestInfo::Resource { verb, group, resource, subresource, namespace, name } => {
                (verb.to_string(), group, resource, subresource, namespace, name)
            }
            other => panic!("not a resource request: {other:?}"),
        }
    }

    #[test]
    fn requests_are_classified_as_upstream() {
        let s = |v: &str| v.to_string();
        assert_eq!(
            resource(classify("GET", "/api/v1/namespaces/x/pods", None)),
            (s("list"), s(""), s("pods"), s(""), s("x"), s(""))
        );
        assert_eq!(
            resource(classify("GET", "/apis/apps/v1/daemonsets", Some("watch=true&limit=1"))),
            (s("watch"), s("apps"), s("daemonsets"), s(""), s(""), s(""))
        );
        assert_eq!(
            resource(classify("PUT", "/api/v1/namespaces/x/pods/p/status", None)),
            (s("update"), s(""), s("pods"), s("status"), s("x"), s("p"))
        );
        assert_eq!(
            resource(classify("DELETE", "/api/v1/namespaces/team-a", None)),
            (s("delete"), s(""), s("namespaces"), s(""), s("team-a"), s("team-a"))
        );
        assert_eq!(
            resource(classify("DELETE", "/api/v1/namespaces/x/configmaps", None)),
            (s("deletecollection"), s(""), s("configmaps"), s(""), s("x"), s(""))
        );
        assert_eq!(
            classify("GET", "/apis/apps/v1", None),
            RequestInfo::NonResource { verb: s("get"), path: s("/apis/apps/v1") }
        );
    }

    #[test]
    fn the_viewer_reads_and_reviews_but_writes_nothing() {
        let viewer = Identity { user: VIEWER_USER, role: Role::Viewer };
        assert!(allowed(&viewer, &classify("GET", "/api/v1/pods", Some("watch=1"))));
        assert!(allowed(&viewer, &classify("GET", "/version", None)));
        assert!(allowed(
            &viewer,
            &classify("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", None)
        ));
        assert!(!allowed(&viewer, &classify("POST", "/api/v1/namespaces/x/pods", None)));
        assert!(!allowed(&viewer, &classify("PATCH", "/api/v1/nodes/gpu-1", None)));
        let admin = Identity { user: ADMIN_USER, role: Role::Admin };
        assert!(allowed(&admin, &classify("DELETE", "/api/v1/nodes/gpu-1", None)));
    }

    #[test]
    fn the_learner_is_admin_except_of_the_labs_records() {
        let learner = Identity { user: LEARNER_USER, role: Role::Learner };
        let may = |method: &str, path: &str| allowed(&learner, &classify(method, path, None));
        assert!(may("DELETE", "/api/v1/nodes/gpu-1"));
        assert!(may("PATCH", "/apis/apps/v1/namespaces/gpu-operator/daemonsets/t"));
        assert!(may("GET", "/api/v1/namespaces/team-a/secrets"));
        // The records: readable, an answer entry may be added; nothing changed, no key read.
        assert!(may("GET", "/api/v1/namespaces/lab-runner/configmaps/lab-runner-inventory-x"));
        assert!(may("POST", "/api/v1/namespaces/lab-runner/configmaps"));
        assert!(!may("PATCH", "/api/v1/namespaces/lab-runner/configmaps/lab-runner-inventory-x"));
        assert!(!may("PUT", "/api/v1/namespaces/lab-runner/configmaps/lab-runner-inventory-x"));
        assert!(!may("DELETE", "/api/v1/namespaces/lab-runner/configmaps/lab-runner-answer-x-abcde"));
        assert!(!may("GET", "/api/v1/namespaces/lab-runner/secrets/lab-runner-key-x"));
        assert!(!may("GET", "/api/v1/secrets"), "every Secret would include the key");
        assert!(!may("DELETE", "/api/v1/namespaces/lab-runner"));
        assert!(!may("POST", "/lab-runner.io/v1/checkpoints/mine/restore"));
    }

    #[test]
    fn forbidden_texts_are_upstreams() {
        let create = classify("POST", "/api/v1/namespaces/x/pods", None);
        insta::assert_json_snapshot!(forbidden_status(VIEWER_USER, &create));
        let label = classify("PATCH", "/api/v1/nodes/gpu-1", None);
        assert_eq!(
            forbidden_status(VIEWER_USER, &label)["message"],
            "nodes \"gpu-1\" is forbidden: User \"lab-runner-viewer\" cannot patch resource \"nodes\" in API group \"\" at the cluster scope"
        );
        let scale = classify("PUT", "/apis/apps/v1/namespaces/d/deployments/web/scale", None);
        assert_eq!(
            forbidden_status(VIEWER_USER, &scale)["message"],
            "deployments.apps \"web\" is forbidden: User \"lab-runner-viewer\" cannot update resource \"deployments/scale\" in API group \"apps\" in the namespace \"d\""
        );
    }

    #[test]
    fn tokens_persist_and_identify() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::load_or_create(dir.path()).unwrap();
        assert_eq!(tokens.admin.len(), 48);
        assert_ne!(tokens.admin, tokens.viewer);
        let again = Tokens::load_or_create(dir.path()).unwrap();
        assert_eq!(again.admin, tokens.admin);
        assert_eq!(again.identify(&tokens.viewer).unwrap().role, Role::Viewer);
        assert!(again.identify("nope").is_none());
    }
}
