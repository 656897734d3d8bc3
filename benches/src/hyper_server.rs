//! The hyper 1.x server that the load harness (`hyper_baseline`) and alloc-reports (its `hyper`
//! subject) compare server-demo with: the same endpoints and response headers as server-demo,
//! served the fastest way hyper offers: one current-thread tokio runtime per worker thread, each
//! accepting on its own `SO_REUSEPORT` listener, HTTP/1 only. The servers are compared under the
//! same load, so every choice here is the one a team tuning hyper for this benchmark would make;
//! where hyper's defaults differ from that, a comment says why the setting is changed.
//!
//! HTTPS ([`HyperServer::start_tls`], `hyper_baseline --tls-cert/--tls-key`) is hyper over
//! tokio-rustls, configured as bufslab-tls configures rustls ([`tls_config`]): rustls 0.23 with
//! bufslab-tls's provider (`ring`, AWS-LC with the `aws-lc-rs` feature), TLS 1.3 only, ALPN
//! `http/1.1`, the provider's rotating ticketer, no 0-RTT.
//!
//! # Examples
//!
//! ```no_run
//! use bufslab_benches::HyperServer;
//!
//! let server = HyperServer::start(([127, 0, 0, 1], 0).into(), 1)?;
//! println!("listening on http://{}", server.local_addr());
//! server.stop()?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::{Body as _, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_LENGTH, CONTENT_TYPE, SERVER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

use crate::workers::{OpenConnection, Workers};

const PLAINTEXT: &[u8] = b"Hello, World!";

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

type Body = Either<Full<Bytes>, Incoming>;

/// A running hyper server: its worker threads, each with a current-thread runtime.
#[derive(Debug)]
pub struct HyperServer(Workers);

impl HyperServer {
    /// Binds `workers` listeners on `addr` (port 0: any free port, the same one for all) and
    /// starts a worker thread on each.
    ///
    /// # Errors
    /// When a listener cannot be bound or a thread cannot be spawned.
    pub fn start(addr: SocketAddr, workers: usize) -> io::Result<HyperServer> {
        Workers::start(addr, workers, "hyper", |l, open| accept(l, open, None)).map(HyperServer)
    }

    /// As [`HyperServer::start`], serving HTTPS with `config` (see [`tls_config`]): each
    /// connection's handshake runs in its own task, then hyper serves the TLS stream.
    ///
    /// # Errors
    /// When a listener cannot be bound or a thread cannot be spawned.
    pub fn start_tls(
        addr: SocketAddr,
        workers: usize,
        config: Arc<ServerConfig>,
    ) -> io::Result<HyperServer> {
        let tls = TlsAcceptor::from(config);
        Workers::start(addr, workers, "hyper", move |l, open| {
            accept(l, open, Some(tls.clone()))
        })
        .map(HyperServer)
    }

    /// The address the listeners are bound to.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.0.local_addr()
    }

    /// Connections accepted and not yet closed, over all workers.
    #[must_use]
    pub fn open_connections(&self) -> u64 {
        self.0.open_connections()
    }

    /// Stops every worker (connections still open are dropped) and waits for their threads.
    ///
    /// # Errors
    /// A worker's error, or a panicked worker.
    pub fn stop(self) -> io::Result<()> {
        self.0.stop()
    }

    /// Serves until a worker fails (they do not end otherwise).
    ///
    /// # Errors
    /// The first worker's error, or a panicked worker.
    pub fn wait(self) -> io::Result<()> {
        self.0.wait()
    }
}

/// The rustls configuration of the HTTPS baseline, the same choices as bufslab-tls's
/// `Config::from_pem_files` (tls/src/handshake.rs), so that both servers run the same
/// handshake: bufslab-tls's provider (`bufslab_tls::crypto_provider`: `ring`, AWS-LC with the
/// `aws-lc-rs` feature) with its default suites and key exchange groups, TLS 1.3 only, no
/// client authentication, ALPN `http/1.1`, resumption by the provider's rotating `Ticketer`
/// (rustls's default two tickets per handshake), no early data. It leaves out only what the
/// own record layer needs and tokio-rustls does not: secret extraction, and the resolver
/// wrapper that records the SNI.
///
/// # Errors
/// A file that cannot be read or holds no certificate or key, or a key that rustls cannot
/// use or that does not belong to the certificate.
pub fn tls_config(cert: &Path, key: &Path) -> io::Result<Arc<ServerConfig>> {
    let (chain, key) = bufslab_tls::pem_files(cert, key).map_err(io::Error::other)?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(bufslab_tls::crypto_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(io::Error::other)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.max_early_data_size = 0;
    config.ticketer = bufslab_tls::ticketer().map_err(io::Error::other)?;
    Ok(Arc::new(config))
}

/// Accepts connections and spawns a task serving each, over TLS when `tls` is given.
async fn accept(listener: tokio::net::TcpListener, open: Arc<AtomicU64>, tls: Option<TlsAcceptor>) {
    let mut http = http1::Builder::new();
    http
        // A batch of pipelined requests is answered with one write, not one per response;
        // TechEmpower's hyper entries set this for the pipelined plaintext test.
        .pipeline_flush(true)
        // `Content-Type`, not `content-type`: the same bytes on the wire as server-demo.
        .title_case_headers(true)
        // hyper renders `Date` itself from a per-thread cache refreshed once a second.
        .auto_date_header(true)
        // hyper's 30 s default is inert without a timer; saying so keeps a later
        // `.timer(..)` from silently adding a timer arm and disarm per request.
        .header_read_timeout(None);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // EMFILE and friends: the pending connection stays queued, so retrying at
                // once would spin. The thread sleep also stalls this worker's open
                // connections for that long; acceptable for a benchmark baseline, where
                // running out of descriptors means the run is already invalid.
                eprintln!("hyper server: accept: {e}");
                thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        // Responses are written whole; Nagle would hold a response back waiting for the
        // ACK of the previous one.
        let _ = stream.set_nodelay(true);
        let counted = OpenConnection::new(&open);
        if let Some(tls) = &tls {
            let (http, handshake) = (http.clone(), tls.accept(stream));
            tokio::spawn(async move {
                // A failed handshake has sent its alert; nothing to serve.
                if let Ok(stream) = handshake.await {
                    let _ = http
                        .serve_connection(TokioIo::new(stream), service_fn(handle))
                        .await;
                }
                drop(counted);
            });
            continue;
        }
        let conn = http.serve_connection(TokioIo::new(stream), service_fn(handle));
        tokio::spawn(async move {
            // A broken or malformed connection ends here; hyper has already answered what
            // deserved an answer.
            let _ = conn.await;
            drop(counted);
        });
    }
}

async fn handle(req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let get_or_head = matches!(*req.method(), Method::GET | Method::HEAD);
    let resp = match req.uri().path() {
        "/plaintext" if get_or_head => fixed(
            StatusCode::OK,
            "text/plain",
            Bytes::from_static(PLAINTEXT),
            None,
        ),
        "/json" if get_or_head => json(),
        "/plaintext" | "/json" => status_only(StatusCode::METHOD_NOT_ALLOWED, Some("GET, HEAD")),
        "/echo" if *req.method() == Method::POST => echo(req),
        "/echo" => status_only(StatusCode::METHOD_NOT_ALLOWED, Some("POST")),
        _ => status_only(StatusCode::NOT_FOUND, None),
    };
    Ok(resp)
}

/// Headers in server-demo's order: Content-Type, Content-Length, (Allow), Server; hyper then
/// appends Date.
fn fixed(
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
    allow: Option<&'static str>,
) -> Response<Body> {
    let len = HeaderValue::from(body.len());
    let mut resp = Response::new(Either::Left(Full::new(body)));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(CONTENT_LENGTH, len);
    if let Some(allow) = allow {
        h.insert(ALLOW, HeaderValue::from_static(allow));
    }
    h.insert(SERVER, HeaderValue::from_static("hyper"));
    resp
}

/// The reason phrase as a text/plain body, as server-demo answers errors.
fn status_only(status: StatusCode, allow: Option<&'static str>) -> Response<Body> {
    let reason = status.canonical_reason().unwrap_or("");
    fixed(
        status,
        "text/plain",
        Bytes::from_static(reason.as_bytes()),
        allow,
    )
}

/// Serialized per request, as server-demo does (and as TechEmpower's rules require).
fn json() -> Response<Body> {
    match serde_json::to_vec(&Message {
        message: "Hello, World!",
    }) {
        Ok(body) => fixed(StatusCode::OK, "application/json", body.into(), None),
        Err(_) => status_only(StatusCode::INTERNAL_SERVER_ERROR, None),
    }
}

/// Streams the request body back. hyper frames the response from the body's size hint: a
/// Content-Length request gets a Content-Length response, a chunked one a chunked response.
fn echo(req: Request<Incoming>) -> Response<Body> {
    let len = req.body().size_hint().exact();
    let mut resp = Response::new(Either::Right(req.into_body()));
    let h = resp.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    // Set here rather than left to hyper, which would append it after Server.
    if let Some(len) = len {
        h.insert(CONTENT_LENGTH, HeaderValue::from(len));
    }
    h.insert(SERVER, HeaderValue::from_static("hyper"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_config_names_the_file_it_cannot_use() {
        let dir = std::env::temp_dir().join(format!("bufslab-hyper-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let missing = dir.join("missing.pem");
        let e = tls_config(&missing, &empty).unwrap_err().to_string();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        let e = tls_config(&empty, &empty).unwrap_err().to_string();
        assert!(e.contains("no CERTIFICATE"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
