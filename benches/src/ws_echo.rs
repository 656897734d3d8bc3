//! The peer WebSocket echo servers of the WebSocket load harness (`benches/load/ws.sh`, driven by
//! `ws_load`) and of alloc-reports' WebSocket scenarios: tokio-tungstenite and fastwebsockets,
//! each written the way its own documentation writes an echo server, on the same worker model as
//! [`HyperServer`](crate::HyperServer): one current-thread tokio runtime per worker thread, each
//! accepting on its own `SO_REUSEPORT` listener.
//!
//! - [`WsPeer::Tungstenite`]: `accept_async` on the TCP stream, then the stream split into its
//!   read and write halves and every text or binary message forwarded from one to the other
//!   (tokio-tungstenite's README and `examples/echo-server.rs`). tungstenite answers pings and
//!   close frames itself.
//! - [`WsPeer::FastWebSockets`]: hyper's HTTP/1 server with upgrades, `upgrade::upgrade` in the
//!   service, and the upgraded connection read through a `FragmentCollector` in an
//!   `unconstrained` task, text and binary frames written back (fastwebsockets'
//!   `examples/echo_server.rs`). Its defaults answer pings and close frames.
//!
//! Both accept the upgrade on any path, and neither negotiates an extension, so neither
//! compresses.
//!
//! # Examples
//!
//! ```no_run
//! use bufslab_benches::{WsEchoServer, WsPeer};
//!
//! let server = WsEchoServer::start(WsPeer::FastWebSockets, ([127, 0, 0, 1], 0).into(), 1)?;
//! println!("listening on http://{}", server.local_addr());
//! server.stop()?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fastwebsockets::{upgrade, FragmentCollector, OpCode, WebSocketError};
use futures_util::{future, StreamExt, TryStreamExt};
use http_body_util::Empty;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::workers::{OpenConnection, Workers};

/// Which peer library serves the echo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WsPeer {
    /// tokio-tungstenite 0.29.
    Tungstenite,
    /// fastwebsockets 0.10 over a hyper 1.x upgrade.
    FastWebSockets,
}

impl WsPeer {
    /// Every peer, in the order reports list them.
    pub const ALL: [WsPeer; 2] = [WsPeer::Tungstenite, WsPeer::FastWebSockets];

    /// The name the load harness and alloc-reports give it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            WsPeer::Tungstenite => "tungstenite",
            WsPeer::FastWebSockets => "fastwebsockets",
        }
    }
}

/// A running WebSocket echo server: its worker threads, each with a current-thread runtime.
#[derive(Debug)]
pub struct WsEchoServer(Workers);

impl WsEchoServer {
    /// Binds `workers` listeners on `addr` (port 0: any free port, the same one for all) and
    /// starts a worker thread serving `peer`'s echo on each.
    ///
    /// # Errors
    /// When a listener cannot be bound or a thread cannot be spawned.
    pub fn start(peer: WsPeer, addr: SocketAddr, workers: usize) -> io::Result<WsEchoServer> {
        Workers::start(addr, workers, peer.name(), move |listener, open| {
            accept(peer, listener, open)
        })
        .map(WsEchoServer)
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

    /// Stops every worker (open connections are dropped) and waits for their threads.
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

async fn accept(peer: WsPeer, listener: tokio::net::TcpListener, open: Arc<AtomicU64>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // EMFILE and friends leave the connection queued: retrying at once would spin.
                eprintln!("{} echo: accept: {e}", peer.name());
                thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        // Every echo is one small write that waits on nothing: Nagle would hold it back until
        // the previous one is acknowledged.
        let _ = stream.set_nodelay(true);
        let open = Arc::clone(&open);
        // A broken connection or a protocol error ends that connection only; the benchmark's
        // client reports what it saw.
        match peer {
            WsPeer::Tungstenite => {
                tokio::spawn(async move {
                    let counted = OpenConnection::new(&open);
                    tungstenite_echo(stream).await;
                    drop(counted);
                });
            }
            WsPeer::FastWebSockets => {
                tokio::spawn(fastwebsockets_connection(stream, open));
            }
        }
    }
}

/// tokio-tungstenite's README echo server, per connection.
async fn tungstenite_echo(stream: TcpStream) {
    let Ok(ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let (write, read) = ws.split();
    let _ = read
        .try_filter(|msg| future::ready(msg.is_text() || msg.is_binary()))
        .forward(write)
        .await;
}

/// fastwebsockets' echo example, per connection: hyper serves the upgrade request, the
/// service spawns the WebSocket task.
///
/// The connection is counted open by the WebSocket task: hyper's connection future ends as soon
/// as it has handed the upgraded stream over.
async fn fastwebsockets_connection(stream: TcpStream, open: Arc<AtomicU64>) {
    let service = service_fn(move |req| fastwebsockets_upgrade(req, Arc::clone(&open)));
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
}

async fn fastwebsockets_upgrade(
    mut req: Request<Incoming>,
    open: Arc<AtomicU64>,
) -> Result<Response<Empty<Bytes>>, WebSocketError> {
    let (response, fut) = upgrade::upgrade(&mut req)?;
    tokio::task::spawn(tokio::task::unconstrained(async move {
        let counted = OpenConnection::new(&open);
        let _ = fastwebsockets_echo(fut).await;
        drop(counted);
    }));
    Ok(response)
}

async fn fastwebsockets_echo(fut: upgrade::UpgradeFut) -> Result<(), WebSocketError> {
    let mut ws = FragmentCollector::new(fut.await?);
    loop {
        let frame = ws.read_frame().await?;
        match frame.opcode {
            OpCode::Close => return Ok(()),
            OpCode::Text | OpCode::Binary => ws.write_frame(frame).await?,
            _ => {}
        }
    }
}
