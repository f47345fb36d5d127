//! The kubeconfig `sim up` writes: the simulator's CA, the admin and viewer tokens, two contexts.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::tls::write_private_file;

/// The kubeconfig's file name inside the state directory.
pub const KUBECONFIG_FILE: &str = "kubeconfig";
/// The admin context, current-context of the written kubeconfig.
pub const ADMIN_CONTEXT: &str = "lab-runner-sim";
/// The read-only context (get/list/watch only).
pub const VIEWER_CONTEXT: &str = "lab-runner-sim-viewer";
/// The cluster entry's name.
pub const CLUSTER_NAME: &str = "lab-runner-sim";

/// Errors writing the kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The kubeconfig path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What goes into the kubeconfig.
#[derive(Debug, Clone)]
pub struct Access<'a> {
    /// `https://127.0.0.1:PORT`.
    pub server: &'a str,
    /// The CA certificate, PEM.
    pub ca_pem: &'a str,
    /// The admin bearer token.
    pub admin_token: &'a str,
    /// The viewer bearer token.
    pub viewer_token: &'a str,
}

/// The kubeconfig text: one cluster, two users, the admin context current.
pub fn render(access: &Access<'_>) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(access.ca_pem);
    let Access { server, admin_token, viewer_token, .. } = access;
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: {CLUSTER_NAME}
  cluster:
    server: {server}
    certificate-authority-data: {ca}
users:
- name: lab-runner-admin
  user:
    token: {admin_token}
- name: lab-runner-viewer
  user:
    token: {viewer_token}
contexts:
- name: {ADMIN_CONTEXT}
  context:
    cluster: {CLUSTER_NAME}
    user: lab-runner-admin
    namespace: default
- name: {VIEWER_CONTEXT}
  context:
    cluster: {CLUSTER_NAME}
    user: lab-runner-viewer
    namespace: default
current-context: {ADMIN_CONTEXT}
preferences: {{}}
"
    )
}

/// Writes the kubeconfig to `path` with mode 0600 (it holds the tokens).
pub fn write(path: &Path, access: &Access<'_>) -> Result<()> {
    write_private_file(path, render(access).as_bytes())
        .map_err(|source| Error::Write { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_reads_both_contexts() {
        let access = Access {
            server: "https://127.0.0.1:6443",
            ca_pem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            admin_token: "admintoken",
            viewer_token: "viewertoken",
        };
        let config = kube::config::Kubeconfig::from_yaml(&render(&access)).unwrap();
        assert_eq!(config.current_context.as_deref(), Some(ADMIN_CONTEXT));
        let contexts: Vec<_> = config.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(contexts, [ADMIN_CONTEXT, VIEWER_CONTEXT]);
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://127.0.0.1:6443"));
        let ca = base64::engine::general_purpose::STANDARD
            .decode(cluster.certificate_authority_data.as_deref().unwrap())
            .unwrap();
        assert_eq!(String::from_utf8(ca).unwrap(), access.ca_pem);
        // kube keeps tokens secret; read the users back as plain YAML.
        let raw: serde_json::Value = serde_saphyr::from_str(&render(&access)).unwrap();
        assert_eq!(raw["users"][1]["name"], "lab-runner-viewer");
        assert_eq!(raw["users"][1]["user"]["token"], "viewertoken");
        assert_eq!(raw["users"][0]["user"]["token"], "admintoken");
    }

    #[test]
    fn the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KUBECONFIG_FILE);
        let access =
            Access { server: "https://127.0.0.1:1", ca_pem: "x", admin_token: "a", viewer_token: "v" };
        write(&path, &access).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }
}
