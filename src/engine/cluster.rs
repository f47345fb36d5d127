//! Connecting to a cluster from a [`ClusterTarget`]: kubeconfig and context, a bounded
//! reachability probe, and retries with back-off for reads.

use std::{future::Future, time::Duration};

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::{
    english_display,
    i18n::{Localized, Message, outside},
    msg,
    session::ClusterTarget,
};

/// How long connecting and the first request may take before the cluster counts as unreachable.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(8);

/// Errors from connecting to a cluster.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kubeconfig could not be read or names no usable context.
    Kubeconfig {
        /// The file, when one was given (else the default one is named).
        path: Option<String>,
        /// Why, on one line.
        reason: Message,
    },
    /// A context asked for (`--context`, `--contexts`) is not in the kubeconfig.
    UnknownContext {
        /// The kubeconfig file.
        path: String,
        /// The context asked for.
        context: String,
        /// The contexts it has.
        known: Vec<String>,
    },
    /// No context was given and the kubeconfig sets no `current-context`.
    NoCurrentContext {
        /// The file, when one was given (else the default one is named).
        path: Option<String>,
    },
    /// The API server did not answer within [`REACH_TIMEOUT`].
    NoAnswer {
        /// The server URL from the kubeconfig.
        server: String,
        /// The context used.
        context: String,
    },
    /// The API server could not be reached.
    Unreachable {
        /// The server URL from the kubeconfig.
        server: String,
        /// The context used.
        context: String,
        /// The innermost cause, on one line.
        reason: Message,
    },
}

impl Localized for Error {
    /// Each names the file or the address and the next command to try.
    fn message(&self) -> Message {
        match self {
            Error::Kubeconfig { path, reason } => msg!(
                "error-kubeconfig",
                path = path.clone().unwrap_or_else(default_kubeconfig_path),
                reason = reason
            ),
            Error::UnknownContext { path, context, known } => {
                msg!(
                    "error-unknown-context",
                    path = path,
                    context = context,
                    known = crate::i18n::list(known)
                )
            }
            Error::NoCurrentContext { path } => msg!(
                "error-kubeconfig",
                path = path.clone().unwrap_or_else(default_kubeconfig_path),
                reason = msg!("error-no-current-context")
            ),
            Error::Unreachable { server, context, reason } => {
                msg!("error-unreachable", server = server, context = context, reason = reason)
            }
            Error::NoAnswer { server, context } => msg!(
                "error-unreachable",
                server = server,
                context = context,
                reason = msg!("error-no-answer", seconds = REACH_TIMEOUT.as_secs())
            ),
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A connected cluster: the client and where it points, for messages.
#[derive(Clone)]
pub struct Cluster {
    /// The client every engine request goes through.
    pub client: kube::Client,
    /// The server URL.
    pub server: String,
    /// The context name.
    pub context: String,
    /// The same cluster without the read timeout, for watches (see [`Cluster::watch_client`]).
    watch: kube::Client,
}

impl Cluster {
    /// Wraps an existing client (tests, the in-process simulator) without probing it.
    pub fn from_client(client: kube::Client, server: &str, context: &str) -> Cluster {
        Cluster { watch: client.clone(), client, server: server.to_string(), context: context.to_string() }
    }

    /// The client for long-running watches: `client` has a 30 s read timeout, which would cut
    /// every quiet watch stream after 30 s (and make `check --watch` and the class board re-list
    /// each kind twice a minute); this one has none (the server ends a watch after its
    /// `timeoutSeconds`, and the watcher re-establishes it).
    pub fn watch_client(&self) -> kube::Client {
        self.watch.clone()
    }
}

/// The kubeconfig kube reads when none is given: `$KUBECONFIG`, else `~/.kube/config`.
pub fn default_kubeconfig_path() -> String {
    match std::env::var("KUBECONFIG") {
        Ok(value) if !value.is_empty() => value,
        _ => std::env::var("HOME")
            .map(|home| format!("{home}/.kube/config"))
            .unwrap_or_else(|_| "~/.kube/config".into()),
    }
}

/// Reads `target`'s kubeconfig (the default one when none is given).
pub fn read_kubeconfig(target: &ClusterTarget) -> Result<Kubeconfig> {
    let path = target.kubeconfig.as_ref().map(|p| p.display().to_string());
    match &target.kubeconfig {
        Some(file) => Kubeconfig::read_from(file),
        None => Kubeconfig::read(),
    }
    .map_err(|e| Error::Kubeconfig { path, reason: outside::cause(&e) })
}

/// Every context of `kubeconfig` named in `contexts` exists; else bad input listing the known ones.
pub fn require_contexts<'a>(
    target: &ClusterTarget,
    kubeconfig: &Kubeconfig,
    contexts: impl IntoIterator<Item = &'a String>,
) -> Result<()> {
    let known: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
    for context in contexts {
        if !known.contains(context) {
            return Err(Error::UnknownContext {
                path: target
                    .kubeconfig
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(default_kubeconfig_path),
                context: context.clone(),
                known,
            });
        }
    }
    Ok(())
}

/// Builds a client for `target` and proves the server answers (`GET /version`) within
/// [`REACH_TIMEOUT`]; otherwise one-line [`Error::Unreachable`].
pub async fn connect(target: &ClusterTarget) -> Result<Cluster> {
    let path = target.kubeconfig.as_ref().map(|p| p.display().to_string());
    let bad = |reason: Message| Error::Kubeconfig { path: path.clone(), reason };
    let kubeconfig = read_kubeconfig(target)?;
    require_contexts(target, &kubeconfig, &target.context)?;
    let context = target
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())
        .ok_or_else(|| Error::NoCurrentContext { path: path.clone() })?;
    let options = KubeConfigOptions { context: Some(context.clone()), ..Default::default() };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| bad(outside::cause(&e)))?;
    config.connect_timeout = Some(Duration::from_secs(5));
    let server = config.cluster_url.to_string().trim_end_matches('/').to_string();
    let unreachable =
        |reason: Message| Error::Unreachable { server: server.clone(), context: context.clone(), reason };
    let watch = kube::Client::try_from(config.clone()).map_err(|e| unreachable(outside::cause(&e)))?;
    config.read_timeout = Some(Duration::from_secs(30));
    let client = kube::Client::try_from(config).map_err(|e| unreachable(outside::cause(&e)))?;
    match tokio::time::timeout(REACH_TIMEOUT, client.apiserver_version()).await {
        Err(_) => Err(Error::NoAnswer { server, context }),
        Ok(Err(e)) => Err(unreachable(outside::cause(&e))),
        Ok(Ok(_)) => Ok(Cluster { client, server, context, watch }),
    }
}

/// The innermost cause of an error chain on one line (see [`crate::i18n::outside::one_line`]).
pub fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    crate::i18n::outside::one_line(error)
}

/// Why a request failed, for a reader: the API server's own message (quoted) and code, or the
/// connection's error named by its kind ([`outside::cause`]).
pub fn reason(error: &kube::Error) -> Message {
    match error {
        kube::Error::Api(status) => {
            msg!("kube-status", message = &status.message, code = status.code.to_string())
        }
        other => outside::cause(other),
    }
}

/// Whether a failed read is worth retrying: throttling (429), server errors (5xx) and broken
/// connections — not 4xx answers, which will not change.
pub fn is_transient(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Lists every object of `api` (all namespaces or one, as `api` was built), with retries.
pub async fn list_all<K>(api: &kube::Api<K>) -> Result<kube::core::ObjectList<K>, kube::Error>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let params = kube::api::ListParams::default();
    with_retries(|| api.list(&params)).await
}

/// Runs a read, retrying transient failures with exponential back-off (200 ms, 400 ms, 800 ms).
pub async fn with_retries<T, F, Fut>(mut read: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut delay = Duration::from_millis(200);
    let mut attempt = 0;
    loop {
        match read().await {
            Err(e) if attempt < 3 && is_transient(&e) => {
                attempt += 1;
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_takes_the_innermost_cause() {
        let io =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused (os error 111)");
        assert_eq!(one_line(&io), "connection refused");
    }

    #[tokio::test]
    async fn retries_stop_on_a_client_error() {
        let mut calls = 0;
        let result: Result<(), kube::Error> = with_retries(|| {
            calls += 1;
            let status = kube::core::Status::failure("nope", "NotFound").with_code(404);
            async move { Err(kube::Error::Api(Box::new(status))) }
        })
        .await;
        assert!(result.is_err());
        assert_eq!(calls, 1);
    }

    #[tokio::test]
    async fn transient_errors_are_retried() {
        let mut calls = 0;
        let result: Result<u8, kube::Error> = with_retries(|| {
            calls += 1;
            let ok = calls == 3;
            async move {
                if ok {
                    Ok(7)
                } else {
                    let status = kube::core::Status::failure("busy", "TooManyRequests").with_code(429);
                    Err(kube::Error::Api(Box::new(status)))
                }
            }
        })
        .await;
        assert_eq!(result.unwrap(), 7);
        assert_eq!(calls, 3);
    }
}
