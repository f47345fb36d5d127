//! Who may read the board: a token for a board other hosts can reach (printed at start, kept by the page as a cookie), and on loopback only requests addressed to this host by a loopback name.
//!
//! The board shows every learner's evidence, so a board on a non-loopback address without a
//! token is refused at start. On loopback the token is optional, but the `Host` header must name
//! a loopback address: a web page elsewhere cannot read the board by pointing a DNS name of its
//! own at 127.0.0.1 (DNS rebinding).

use std::{net::SocketAddr, sync::Arc};

use axum::{
    extract::{Request, State},
    http::{HeaderMap, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};

use crate::sim::auth;

/// The cookie the page keeps its token in.
pub const COOKIE: &str = "lab_runner_board";
/// The query parameter a printed URL carries the token in.
pub const TOKEN_PARAM: &str = "token";
/// The path answered without a token (probes).
pub const HEALTH_PATH: &str = "/healthz";

/// What `--token` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenChoice {
    /// No token (only on loopback).
    None,
    /// A random one, made now and printed in the board's URL.
    Generate,
    /// This one.
    Given(String),
}

impl TokenChoice {
    /// `--token VALUE`: `generate` asks for a random one.
    pub fn parse(value: Option<String>) -> TokenChoice {
        match value {
            None => TokenChoice::None,
            Some(value) if value == "generate" => TokenChoice::Generate,
            Some(value) => TokenChoice::Given(value),
        }
    }

    /// The token, made when asked to generate one.
    pub fn resolve(self) -> Result<Option<String>, auth::Error> {
        match self {
            TokenChoice::None => Ok(None),
            TokenChoice::Generate => auth::random_token().map(Some),
            TokenChoice::Given(token) => Ok(Some(token)),
        }
    }
}

/// What the guard lets through.
#[derive(Debug, Clone)]
pub struct Gate {
    token: Option<Arc<str>>,
    loopback: bool,
}

impl Gate {
    /// The gate of a board listening on `listen` with `token`.
    pub fn new(listen: SocketAddr, token: Option<&str>) -> Gate {
        Gate { token: token.map(Arc::from), loopback: listen.ip().is_loopback() }
    }
}

/// Whether `host` (a `Host` header: `name[:port]`, `[v6]:port`) names a loopback address.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(rest, |(name, _)| name),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The value of `name` in a query string.
fn query_value<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The token a request carries: `Authorization: Bearer`, the page's cookie, or `?token=`.
fn presented(headers: &HeaderMap, query: Option<&str>) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(token) =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(auth::bearer_token)
    {
        found.push(token.to_string());
    }
    for cookies in headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()) {
        for cookie in cookies.split(';') {
            if let Some((COOKIE, value)) = cookie.trim().split_once('=') {
                found.push(value.to_string());
            }
        }
    }
    if let Some(token) = query.and_then(|q| query_value(q, TOKEN_PARAM)) {
        found.push(token.to_string());
    }
    found
}

/// The board's guard (an axum middleware): see the module docs.
pub async fn guard(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    if request.uri().path() == HEALTH_PATH {
        return next.run(request).await;
    }
    if gate.loopback {
        let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
        if !loopback_host(host) {
            return (
                StatusCode::MISDIRECTED_REQUEST,
                "this board answers to 127.0.0.1, [::1] and localhost only\n",
            )
                .into_response();
        }
    }
    let Some(token) = gate.token.as_deref() else {
        return next.run(request).await;
    };
    let query = request.uri().query().map(str::to_string);
    let accepted = presented(request.headers(), query.as_deref()).iter().any(|t| auth::same(t, token));
    if !accepted {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "this board needs its token: open the URL `lab-runner class board` printed\n",
        )
            .into_response();
    }
    let from_query = query.as_deref().is_some_and(|q| query_value(q, TOKEN_PARAM).is_some());
    if from_query && request.method() == Method::GET && request.uri().path() == "/" {
        // The page keeps the token as a cookie (its event stream sends it along) and the address
        // bar loses it, so a screenshot or a projected URL does not show it.
        let rest: Vec<&str> = query
            .as_deref()
            .unwrap_or("")
            .split('&')
            .filter(|pair| !pair.starts_with(&format!("{TOKEN_PARAM}=")))
            .collect();
        let location = if rest.is_empty() { "/".to_string() } else { format!("/?{}", rest.join("&")) };
        let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
        return ([(header::SET_COOKIE, cookie)], Redirect::to(&location)).into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use axum::{Router, body::Body, routing::get};
    use tower::ServiceExt as _;

    use super::*;

    fn board(listen: &str, token: Option<&str>) -> Router {
        let gate = Gate::new(listen.parse().unwrap(), token);
        Router::new()
            .route("/", get(|| async { "page" }))
            .route("/report.json", get(|| async { "{}" }))
            .route(HEALTH_PATH, get(|| async { "ok" }))
            .layer(axum::middleware::from_fn_with_state(gate, guard))
    }

    async fn send(router: &Router, uri: &str, headers: &[(&str, &str)]) -> Response {
        let mut request = Request::get(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        router.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap()
    }

    #[tokio::test]
    async fn a_loopback_board_answers_loopback_names_only() {
        let router = board("127.0.0.1:8420", None);
        for host in ["127.0.0.1:8420", "localhost:8420", "[::1]:8420", "LOCALHOST"] {
            assert_eq!(send(&router, "/", &[("host", host)]).await.status(), StatusCode::OK, "{host}");
        }
        for host in ["evil.example:8420", "10.0.0.5:8420", ""] {
            let status = send(&router, "/report.json", &[("host", host)]).await.status();
            assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{host}");
        }
    }

    #[tokio::test]
    async fn a_token_is_needed_and_the_page_keeps_it_as_a_cookie() {
        let router = board("0.0.0.0:8420", Some("s3cret"));
        let host = ("host", "class.example:8420");
        assert_eq!(send(&router, "/", &[host]).await.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            send(&router, "/report.json?token=wrong", &[host]).await.status(),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(send(&router, HEALTH_PATH, &[host]).await.status(), StatusCode::OK);

        let opened = send(&router, "/?lang=ja&token=s3cret", &[host]).await;
        assert_eq!(opened.status(), StatusCode::SEE_OTHER);
        assert_eq!(opened.headers()[header::LOCATION], "/?lang=ja");
        let cookie = opened.headers()[header::SET_COOKIE].to_str().unwrap();
        assert!(cookie.starts_with("lab_runner_board=s3cret;") && cookie.contains("HttpOnly"), "{cookie}");

        let with_cookie = ("cookie", "other=1; lab_runner_board=s3cret");
        assert_eq!(send(&router, "/?lang=ja", &[host, with_cookie]).await.status(), StatusCode::OK);
        let bearer = ("authorization", "Bearer s3cret");
        assert_eq!(send(&router, "/report.json", &[host, bearer]).await.status(), StatusCode::OK);
        assert_eq!(send(&router, "/report.json?token=s3cret", &[host]).await.status(), StatusCode::OK);
    }
}
