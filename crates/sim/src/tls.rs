//! The simulator's TLS material: a self-signed CA kept in the state dir and a server certificate.
//!
//! kubectl sends its bearer token only over TLS (client-go `clientcmd/client_config.go`: "only try
//! to read the auth information if we are secure"), so the simulator serves HTTPS. The CA is made
//! once, at first start, and kept in the state directory so a kubeconfig written earlier stays
//! valid across `sim down`/`sim up`; the server certificate is re-issued from it at every start.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    sync::Arc,
};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// File names inside the state directory.
pub const CA_CERT_FILE: &str = "ca.crt";
/// The CA's private key (mode 0600).
pub const CA_KEY_FILE: &str = "ca.key";
/// The server certificate, re-issued at every start.
pub const SERVER_CERT_FILE: &str = "server.crt";
/// The server's private key (mode 0600).
pub const SERVER_KEY_FILE: &str = "server.key";

/// Errors making or loading TLS material.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file of the state directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Key or certificate generation failed, or a stored key could not be parsed.
    #[error("{what}: {source}")]
    Certificate {
        /// What was being done.
        what: String,
        /// The cause.
        source: rcgen::Error,
    },
    /// rustls refused the generated certificate.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The CA certificate and the server certificate signed by it.
#[derive(Debug)]
pub struct TlsMaterial {
    /// The CA certificate in PEM, as it goes into the kubeconfig's `certificate-authority-data`.
    pub ca_pem: String,
    /// Whether the CA was made by this call (first start) or loaded.
    pub ca_origin: CaOrigin,
    server_cert: CertificateDer<'static>,
    server_key_pkcs8: Vec<u8>,
}

/// Where the CA came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaOrigin {
    /// Made now: the directory had none.
    Created,
    /// Read from the directory.
    Loaded,
}

/// The CA's fixed parameters: the issuer of every server certificate is rebuilt from them and the
/// stored key, so no X.509 parser is needed to reuse a stored CA.
fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "lab-runner-sim-ca");
    name.push(DnType::OrganizationName, "lab-runner");
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages =
        vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params
}

fn cert_error(what: &str) -> impl FnOnce(rcgen::Error) -> Error + '_ {
    move |source| Error::Certificate { what: what.to_string(), source }
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })
}

/// Writes `contents` to `path` readable by the owner only (0600), replacing it atomically: a
/// reader sees the old file or the new one, never a mixture. The temporary file is named after
/// the file, the process and the write (`.ca.key.4242.7.tmp`): when `ca.crt` and `ca.key` shared
/// `ca.tmp`, two processes writing at once left a key holding a certificate.
pub fn write_private_file(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let write = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{name}.{}.{write}.tmp", std::process::id()));
    {
        let mut options = fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        // The mode above applies only when the file is created; make sure of it either way.
        #[cfg(unix)]
        fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        file.write_all(contents)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)
}

fn write(path: &Path, contents: &str) -> Result<()> {
    write_private_file(path, contents.as_bytes())
        .map_err(|source| Error::Io { path: path.to_path_buf(), source })
}

impl TlsMaterial {
    /// Loads the CA from `dir` (making and storing one on first start) and issues a server
    /// certificate for `names` (IP addresses become IP SANs, the rest DNS SANs; the caller
    /// always includes `127.0.0.1` and `localhost`), also written to `dir` for curl and friends.
    pub fn load_or_create(dir: &Path, names: &[String]) -> Result<TlsMaterial> {
        let (ca_cert_path, ca_key_path) = (dir.join(CA_CERT_FILE), dir.join(CA_KEY_FILE));
        let (ca_pem, ca_key, ca_origin) = if ca_cert_path.is_file() && ca_key_path.is_file() {
            let key = KeyPair::from_pem(&read(&ca_key_path)?).map_err(cert_error("reading ca.key"))?;
            (read(&ca_cert_path)?, key, CaOrigin::Loaded)
        } else {
            let key = KeyPair::generate().map_err(cert_error("generating the CA key"))?;
            let cert = ca_params().self_signed(&key).map_err(cert_error("signing the CA certificate"))?;
            write(&ca_key_path, &key.serialize_pem())?;
            write(&ca_cert_path, &cert.pem())?;
            (cert.pem(), key, CaOrigin::Created)
        };
        let issuer = Issuer::new(ca_params(), ca_key);

        let mut params =
            CertificateParams::new(names.to_vec()).map_err(cert_error("server certificate names"))?;
        params.distinguished_name.push(DnType::CommonName, "lab-runner-sim");
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = KeyPair::generate().map_err(cert_error("generating the server key"))?;
        let server_cert =
            params.signed_by(&server_key, &issuer).map_err(cert_error("signing the server certificate"))?;
        write(&dir.join(SERVER_KEY_FILE), &server_key.serialize_pem())?;
        write(&dir.join(SERVER_CERT_FILE), &server_cert.pem())?;

        Ok(TlsMaterial {
            ca_pem,
            ca_origin,
            server_cert: server_cert.der().clone(),
            server_key_pkcs8: server_key.serialize_der(),
        })
    }

    /// The rustls server configuration: ring provider, the server certificate, ALPN `http/1.1`
    /// only (kube and kubectl both speak HTTP/1.1 to the simulator).
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.server_key_pkcs8.clone()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(vec![self.server_cert.clone()], key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_is_made_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["127.0.0.1".to_string(), "localhost".to_string(), "sim.example".to_string()];
        let first = TlsMaterial::load_or_create(dir.path(), &names).unwrap();
        assert_eq!(first.ca_origin, CaOrigin::Created);
        assert!(first.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let second = TlsMaterial::load_or_create(dir.path(), &names[..2]).unwrap();
        assert_eq!(second.ca_origin, CaOrigin::Loaded);
        assert_eq!(first.ca_pem, second.ca_pem);
        second.server_config().unwrap();
        // Only the material is left: no temporary file.
        let mut files: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into())
            .collect();
        files.sort();
        assert_eq!(files, [CA_CERT_FILE, CA_KEY_FILE, SERVER_CERT_FILE, SERVER_KEY_FILE]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join(CA_KEY_FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn files_written_at_once_each_keep_their_own_contents() {
        let dir = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..8)
            .map(|n| {
                let dir = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    let file = if n % 2 == 0 { CA_CERT_FILE } else { CA_KEY_FILE };
                    for _ in 0..50 {
                        write_private_file(&dir.join(file), file.repeat(100).as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        for file in [CA_CERT_FILE, CA_KEY_FILE] {
            assert_eq!(fs::read_to_string(dir.path().join(file)).unwrap(), file.repeat(100));
        }
    }
}
