//! `pods/log`, `pods/exec`, `pods/attach`, `pods/portforward` and `pods/ephemeralcontainers`: logs
//! are what the emulated NVIDIA containers wrote; the simulator runs no processes, so other
//! running containers have empty logs and exec, attach, port-forward and ephemeral (debug)
//! containers are refused with a reason.

use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;

use axum::{
    extract::{Path, Query, State},
    http::header,
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::Value;

use super::{AppState, status::ApiError};

/// Errors answering a log or exec request, each an upstream-shaped `Status`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The request cannot be served (pod or container missing, container not started…).
    #[error(transparent)]
    Api(#[from] ApiError),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Log lines per pod uid and container name, as the emulated containers wrote them. The
/// controllers publish into it; the API reads it.
#[derive(Debug, Default)]
pub struct ContainerLogs {
    lines: RwLock<HashMap<String, BTreeMap<String, Vec<String>>>>,
}

impl ContainerLogs {
    /// Replaces every pod's logs with `logs` (pod uid → container name → lines).
    pub fn publish(&self, logs: HashMap<String, BTreeMap<String, Vec<String>>>) {
        *self.lines.write().unwrap_or_else(|p| p.into_inner()) = logs;
    }

    /// The lines a container of a pod wrote (empty when it wrote none).
    pub fn of(&self, pod_uid: &str, container: &str) -> Vec<String> {
        let lines = self.lines.read().unwrap_or_else(|p| p.into_inner());
        lines.get(pod_uid).and_then(|c| c.get(container)).cloned().unwrap_or_default()
    }
}

/// The query of a log request (`PodLogOptions`).
#[derive(Debug, Default, Deserialize)]
pub struct LogQuery {
    container: Option<String>,
    previous: Option<bool>,
    #[serde(rename = "tailLines")]
    tail_lines: Option<usize>,
}

/// The query of an exec request (`PodExecOptions`).
#[derive(Debug, Default, Deserialize)]
pub struct ExecQuery {
    container: Option<String>,
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        match self {
            Error::Api(error) => error.into_response(),
        }
    }
}

fn pod(state: &AppState, namespace: &str, name: &str) -> Result<Value> {
    let stored = state.store.get("pods", namespace, name).ok_or_else(|| ApiError::not_found("pods", name))?;
    crate::gojson::from_checked(stored.json.as_bytes()).map_err(|e| ApiError::internal(e.to_string()).into())
}

fn names(pod: &Value, field: &str) -> Vec<String> {
    pod["spec"][field]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

/// The container a request names, defaulted as the apiserver does when the pod has one
/// (pkg/registry/core/pod/strategy.go `validateContainer`).
fn container(pod: &Value, name: &str, asked: Option<String>) -> Result<String> {
    let containers = names(pod, "containers");
    let init = names(pod, "initContainers");
    match asked.filter(|c| !c.is_empty()) {
        Some(asked) if containers.contains(&asked) || init.contains(&asked) => Ok(asked),
        Some(asked) => {
            Err(ApiError::bad_request(format!("container {asked} is not valid for pod {name}")).into())
        }
        None => match containers.as_slice() {
            [only] => Ok(only.clone()),
            _ => {
                let mut message = format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    containers.join(" ")
                );
                if !init.is_empty() {
                    message.push_str(&format!(" or one of the init containers: [{}]", init.join(" ")));
                }
                Err(ApiError::bad_request(message).into())
            }
        },
    }
}

/// The kubelet's answer for a container that has no logs to give
/// (pkg/kubelet/kubelet_pods.go `validateContainerLogStatus`, v1.33).
fn log_status_error(status: &Value, container: &str, pod: &str, previous: bool) -> Option<String> {
    let state = &status["state"];
    let last = &status["lastState"]["terminated"];
    let has_id = |terminated: &Value| terminated["containerID"].as_str().is_some_and(|id| !id.is_empty());
    if previous {
        return (!has_id(last))
            .then(|| format!("previous terminated container \"{container}\" in pod \"{pod}\" not found"));
    }
    if state["running"].is_object() {
        return None;
    }
    if state["terminated"].is_object() {
        return (!has_id(&state["terminated"]) && !has_id(last))
            .then(|| format!("container \"{container}\" in pod \"{pod}\" is terminated"));
    }
    if last.is_object() {
        return (!has_id(last)).then(|| format!("container \"{container}\" in pod \"{pod}\" is terminated"));
    }
    match state["waiting"]["reason"].as_str() {
        Some("ErrImagePull") => Some(format!(
            "container \"{container}\" in pod \"{pod}\" is waiting to start: image can't be pulled"
        )),
        Some("ImagePullBackOff") => Some(format!(
            "container \"{container}\" in pod \"{pod}\" is waiting to start: trying and failing to pull image"
        )),
        Some(reason) => {
            Some(format!("container \"{container}\" in pod \"{pod}\" is waiting to start: {reason}"))
        }
        None => Some(format!("container \"{container}\" in pod \"{pod}\" is waiting to start - no logs yet")),
    }
}

/// `GET /api/v1/namespaces/{namespace}/pods/{name}/log`: the container's lines as text/plain.
pub async fn logs(
    State(state): State<AppState>,
    Path((namespace, name)): Path<(String, String)>,
    Query(query): Query<LogQuery>,
) -> Result<Response> {
    let pod = pod(&state, &namespace, &name)?;
    let container = container(&pod, &name, query.container)?;
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        return Err(ApiError::bad_request(format!("pod {name} does not have a host assigned")).into());
    }
    let statuses = ["containerStatuses", "initContainerStatuses"]
        .iter()
        .flat_map(|field| pod["status"][*field].as_array().cloned().unwrap_or_default())
        .find(|s| s["name"] == container.as_str());
    let previous = query.previous.unwrap_or(false);
    let error = match &statuses {
        Some(status) => log_status_error(status, &container, &name, previous),
        None => {
            Some(format!("container \"{container}\" in pod \"{name}\" is waiting to start - no logs yet"))
        }
    };
    if let Some(message) = error {
        return Err(ApiError::bad_request(message).into());
    }
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let mut lines = state.container_logs.of(uid, &container);
    if let Some(tail) = query.tail_lines {
        lines = lines.split_off(lines.len().saturating_sub(tail));
    }
    let body: String = lines.iter().map(|line| format!("{line}\n")).collect();
    Ok(([(header::CONTENT_TYPE, "text/plain")], body).into_response())
}

/// `GET`/`POST /api/v1/namespaces/{namespace}/pods/{name}/exec`: refused with a `Status` before
/// any upgrade — kubectl's WebSocket dialer then falls back to SPDY, which reports it as
/// `error: unable to upgrade connection: <message>` (one line, no hang).
pub async fn exec(
    State(state): State<AppState>,
    Path((namespace, name)): Path<(String, String)>,
    Query(query): Query<ExecQuery>,
) -> Result<Response> {
    refuse_streaming(&state, &namespace, &name, query, "exec into")
}

/// The refusal of a streaming subresource (`exec`, `attach`) of a container of the pod: 400
/// with what could not be done and why.
fn refuse_streaming(
    state: &AppState,
    namespace: &str,
    name: &str,
    query: ExecQuery,
    action: &str,
) -> Result<Response> {
    let pod = pod(state, namespace, name)?;
    let container = container(&pod, name, query.container)?;
    let message = format!(
        "cannot {action} container \"{container}\" in pod \"{name}\": the lab-runner simulator runs no processes"
    );
    Err(ApiError::bad_request(message).into())
}

/// `GET`/`POST …/pods/{name}/attach`: refused as exec is (kubectl prints `error: unable to
/// upgrade connection: <message>`).
pub async fn attach(
    State(state): State<AppState>,
    Path((namespace, name)): Path<(String, String)>,
    Query(query): Query<ExecQuery>,
) -> Result<Response> {
    refuse_streaming(&state, &namespace, &name, query, "attach to")
}

/// `GET`/`POST …/pods/{name}/portforward`: nothing listens in a pod, so it is refused.
pub async fn port_forward(
    State(state): State<AppState>,
    Path((namespace, name)): Path<(String, String)>,
) -> Result<Response> {
    pod(&state, &namespace, &name)?;
    let message =
        format!("cannot forward ports of pod \"{name}\": the lab-runner simulator runs no processes");
    Err(ApiError::bad_request(message).into())
}

/// `…/pods/{name}/ephemeralcontainers`: a read answers the pod (the subresource's object), a
/// write — `kubectl debug <pod>` adding a debug container — is refused with 403 and a reason,
/// as the node debug pod is: no container would run.
pub async fn ephemeral_containers(
    State(state): State<AppState>,
    method: axum::http::Method,
    Path((namespace, name)): Path<(String, String)>,
) -> Result<Response> {
    let pod = pod(&state, &namespace, &name)?;
    if method == axum::http::Method::GET {
        return Ok(([(header::CONTENT_TYPE, "application/json")], pod.to_string()).into_response());
    }
    Err(ApiError {
        code: 403,
        reason: "Forbidden",
        details: Some(serde_json::json!({"name": name, "kind": "pods"})),
        message: format!(
            "pods \"{name}\" is forbidden: the simulator runs no containers, so no ephemeral container can run in pod {name:?}; read its state with kubectl describe pod {name} and kubectl logs {name}"
        ),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn waiting_containers_answer_as_the_kubelet_does() {
        let waiting = |reason: &str| json!({"state": {"waiting": {"reason": reason}}});
        assert_eq!(
            log_status_error(&waiting("ImagePullBackOff"), "c", "p", false).unwrap(),
            "container \"c\" in pod \"p\" is waiting to start: trying and failing to pull image"
        );
        assert_eq!(
            log_status_error(&waiting("ContainerCreating"), "c", "p", false).unwrap(),
            "container \"c\" in pod \"p\" is waiting to start: ContainerCreating"
        );
        assert_eq!(log_status_error(&json!({"state": {"running": {}}}), "c", "p", false), None);
        let crashed = json!({"state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "containerID": "containerd://1"}}});
        assert_eq!(log_status_error(&crashed, "c", "p", false), None);
        assert_eq!(log_status_error(&crashed, "c", "p", true), None);
    }
}
