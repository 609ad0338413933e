//! TLS for the command, on rustls with `ring` (the workspace's one crypto provider,
//! DESIGN.md): the trial's client configuration (the system's root certificates, or
//! `--cacert`, or — only when spelled out — no verification at all), and `recuo serve
//! --tls`'s own certificate authority and certificate for 127.0.0.1, made at start.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};

use crate::error::{run_error, CliError};

/// The crypto provider: `ring`, never chosen at run time.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Whom the trial's client trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The system's root certificates (rustls-native-certs: the OS's store, e.g.
    /// /etc/ssl/certs, or `SSL_CERT_FILE` / `SSL_CERT_DIR`).
    System,
    /// Only the certificates of this PEM file (`--cacert`), as curl's `--cacert` does.
    CaFile(PathBuf),
    /// Anyone: any certificate is taken (`--insecure`).
    Anyone,
    /// Nobody: there is no https:// URL to read.
    Nobody,
}

/// The client's TLS configuration for `trust`.
///
/// # Errors
/// [`CliError::Usage`] when the CA file cannot be read or holds no certificate;
/// [`CliError::Run`] when the system has no root certificate rustls can use.
pub fn client_config(trust: &Trust) -> Result<ClientConfig, CliError> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| run_error("setting up TLS", e))?;
    let config = match trust {
        Trust::Nobody => builder
            .with_root_certificates(RootCertStore::empty())
            .with_no_client_auth(),
        Trust::Anyone => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(TakeAnyCertificate(provider())))
            .with_no_client_auth(),
        Trust::CaFile(path) => {
            let mut roots = RootCertStore::empty();
            for cert in read_certificates(path)? {
                roots
                    .add(cert)
                    .map_err(|e| CliError::Usage(format!("--cacert {}: {e}", path.display())))?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::System => {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = RootCertStore::empty();
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(CliError::Run(
                    "the system has no root certificate to verify https servers with: install \
                     them (ca-certificates) or name a CA with --cacert FILE"
                        .to_string(),
                ));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    // No ALPN: hyper-rustls sets it for the HTTP versions enabled (HTTP/1.1 only here).
    Ok(config)
}

/// The certificates of a PEM file.
fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, CliError> {
    let bad =
        |e: &dyn std::fmt::Display| CliError::Usage(format!("--cacert {}: {e}", path.display()));
    let iter = CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))?;
    let certs = iter.collect::<Result<Vec<_>, _>>().map_err(|e| bad(&e))?;
    if certs.is_empty() {
        return Err(bad(&"no PEM certificate in it"));
    }
    Ok(certs)
}

/// `--insecure`: takes any certificate, for any name. The handshake's signatures are still
/// checked (so the connection is at least made with whoever holds the key it showed), but
/// that may be anyone: an attacker in the path reads and changes everything.
#[derive(Debug)]
struct TakeAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for TakeAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `recuo serve --tls`: a certificate authority made for this run, and a certificate it
/// signed for `127.0.0.1` and `localhost`.
#[derive(Debug)]
pub struct ServerTls {
    /// The server's configuration (HTTP/1.1).
    pub config: Arc<ServerConfig>,
    /// The CA's certificate, PEM: what a client trusts with `--cacert`.
    pub ca_pem: String,
}

/// Makes a CA and a certificate for 127.0.0.1 (ECDSA P-256, by rcgen on `ring`).
///
/// # Errors
/// [`CliError::Run`] when a key or a certificate cannot be made.
pub fn server_tls() -> Result<ServerTls, CliError> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
    let fail = |e: rcgen::Error| run_error("making the server's certificate", e);
    let ca_key = KeyPair::generate().map_err(fail)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    ca.distinguished_name
        .push(DnType::CommonName, "recuo serve test CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).map_err(fail)?;

    let key = KeyPair::generate().map_err(fail)?;
    let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .map_err(fail)?;
    leaf.distinguished_name
        .push(DnType::CommonName, "recuo serve");
    let cert = leaf.signed_by(&key, &ca_cert, &ca_key).map_err(fail)?;

    let chain = vec![cert.der().clone()];
    let private = PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| run_error("making the server's key", e))?;
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| run_error("setting up TLS", e))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| run_error("setting up TLS", e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(ServerTls {
        config: Arc::new(config),
        ca_pem: ca_cert.pem(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_empty_ca_file_is_a_usage_error() {
        let missing = client_config(&Trust::CaFile("/nonexistent/ca.pem".into()));
        assert!(matches!(missing, Err(CliError::Usage(m)) if m.contains("/nonexistent/ca.pem")));
        let dir = std::env::temp_dir().join(format!("recuo-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let r = client_config(&Trust::CaFile(empty));
        assert!(matches!(r, Err(CliError::Usage(m)) if m.contains("no PEM certificate")));
        let made = server_tls().unwrap();
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, &made.ca_pem).unwrap();
        assert!(client_config(&Trust::CaFile(ca)).is_ok());
        assert!(client_config(&Trust::Anyone).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
