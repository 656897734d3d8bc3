//! The hyper 1.x server that the load harness (`hyper_baseline`) and alloc-reports (its `hyper`
//! subject) compare server-demo with: the same endpoints and response headers as server-demo,
//! served the fastest way hyper offers: one current-thread tokio runtime per worker thread, each
//! accepting on its own `SO_REUSEPORT` listener, HTTP/1 only. The servers are compared under the
//! same load, so every choice here is the one a team tuning hyper for this benchmark would make;
//! where hyper's defaults differ from that, a comment says why the setting is changed.
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
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
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
use socket2::{Domain, Protocol, Socket, Type};
use tokio::sync::oneshot;

/// Same backlog as server-demo's listeners, so neither refuses a connection burst the other
/// would queue.
const BACKLOG: i32 = 4096;

const PLAINTEXT: &[u8] = b"Hello, World!";

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

type Body = Either<Full<Bytes>, Incoming>;

/// A running hyper server: its worker threads, each with a current-thread runtime.
#[derive(Debug)]
pub struct HyperServer {
    addr: SocketAddr,
    workers: Vec<Worker>,
    open: Arc<AtomicU64>,
}

/// One worker thread and the sender that stops it.
#[derive(Debug)]
struct Worker {
    stop: oneshot::Sender<()>,
    thread: JoinHandle<io::Result<()>>,
}

impl HyperServer {
    /// Binds `workers` listeners on `addr` (port 0: any free port, the same one for all) and
    /// starts a worker thread on each.
    ///
    /// # Errors
    /// When a listener cannot be bound or a thread cannot be spawned.
    pub fn start(addr: SocketAddr, workers: usize) -> io::Result<HyperServer> {
        // Bind every listener before any worker starts, so a client that sees the address is
        // never refused. The first resolves port 0; the others join it on its port.
        let first = bind(addr)?;
        let addr = first.local_addr()?;
        let mut listeners = vec![first];
        for _ in 1..workers {
            listeners.push(bind(addr)?);
        }
        let open = Arc::new(AtomicU64::new(0));
        let mut server = HyperServer {
            addr,
            workers: Vec::with_capacity(workers),
            open,
        };
        for (id, listener) in listeners.into_iter().enumerate() {
            let (stop, stopped) = oneshot::channel();
            let open = Arc::clone(&server.open);
            let thread = thread::Builder::new()
                .name(format!("hyper-worker-{id}"))
                .spawn(move || worker(listener, stopped, open))?;
            server.workers.push(Worker { stop, thread });
        }
        Ok(server)
    }

    /// The address the listeners are bound to.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections accepted and not yet closed, over all workers.
    #[must_use]
    pub fn open_connections(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Stops every worker (connections still open are dropped) and waits for their threads.
    ///
    /// # Errors
    /// A worker's error, or a panicked worker.
    pub fn stop(self) -> io::Result<()> {
        let threads: Vec<_> = self
            .workers
            .into_iter()
            .map(|w| {
                // A worker that already ended has dropped its receiver; nothing to stop.
                let _ = w.stop.send(());
                w.thread
            })
            .collect();
        join(threads)
    }

    /// Serves until a worker fails (they do not end otherwise).
    ///
    /// # Errors
    /// The first worker's error, or a panicked worker.
    pub fn wait(self) -> io::Result<()> {
        let (stops, threads): (Vec<_>, Vec<_>) =
            self.workers.into_iter().map(|w| (w.stop, w.thread)).unzip();
        let result = join(threads);
        drop(stops);
        result
    }
}

pub(crate) fn join(threads: Vec<JoinHandle<io::Result<()>>>) -> io::Result<()> {
    let mut result = Ok(());
    for t in threads {
        let r = t
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("a worker thread panicked")));
        if result.is_ok() {
            result = r;
        }
    }
    result
}

pub(crate) fn bind(addr: SocketAddr) -> io::Result<StdListener> {
    let with_addr =
        |e: io::Error| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}"));
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    sock.set_reuse_address(true).map_err(with_addr)?;
    // Each worker accepts on its own socket and the kernel hashes connections over them: no
    // shared accept queue, no work stealing, as in server-demo.
    sock.set_reuse_port(true).map_err(with_addr)?;
    sock.set_nonblocking(true).map_err(with_addr)?;
    sock.bind(&addr.into()).map_err(with_addr)?;
    sock.listen(BACKLOG).map_err(with_addr)?;
    Ok(sock.into())
}

/// Counts a connection as open for as long as its task lives (dropped when the connection
/// ends, or when the runtime drops the task at stop).
pub(crate) struct OpenConnection(Arc<AtomicU64>);

impl OpenConnection {
    pub(crate) fn new(open: &Arc<AtomicU64>) -> Self {
        open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(Arc::clone(open))
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One worker: a current-thread runtime (no cross-thread wake-ups or task migration) that
/// accepts on its own listener and drives its connections, until `stop` fires or its sender
/// is dropped. Dropping the runtime then drops every connection's task.
fn worker(
    listener: StdListener,
    stop: oneshot::Receiver<()>,
    open: Arc<AtomicU64>,
) -> io::Result<()> {
    // No time driver: nothing here sleeps on tokio's clock, and without one each park skips
    // the timer wheel.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let accepting = tokio::spawn(accept(listener, open));
        let _ = stop.await;
        accepting.abort();
        Ok(())
    })
}

/// Accepts connections and spawns a task serving each.
async fn accept(listener: tokio::net::TcpListener, open: Arc<AtomicU64>) {
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
