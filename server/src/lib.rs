//! `bufslab-server`: a thread-per-core HTTP/1.1 server engine whose request path never touches
//! the heap.
//!
//! An application is a [`Service`]: the engine calls it with each parsed request head
//! (borrowed from the read block, zero-copy) and an [`Exchange`] that encodes the response
//! straight into pooled output blocks. Everything else is the engine's:
//!
//! * **Workers.** N threads, each with its own `SO_REUSEPORT` listener, connection slots,
//!   deadline lists, local cache of one shared [`bufslab`] pool, and its own service instance
//!   ([`MakeService`]); nothing on the request path crosses threads.
//! * **Drivers.** Readiness (epoll, through mio) or completions (io_uring with provided buffer
//!   rings fed by the pool, [`bufslab_uring`]), chosen by [`Config::io`]; both run the same
//!   I/O-free connection core, so they answer byte for byte alike.
//! * **The protocol.** Parsing and validation ([`bufslab_http`], strict RFC 9112), body
//!   framing (Content-Length and chunked, in and out), keep-alive and pipelining (a batch's
//!   responses leave in one write, in order), `100 Continue`, `Date`, `HEAD`, `OPTIONS *`,
//!   the error statuses (400, 408, 413, 431), the close and lingering-close rules, timeouts,
//!   backpressure, and waiting for the pool when it is exhausted.
//! * **Upgrades.** A service may switch a connection to another protocol
//!   ([`Exchange::switch_protocols`], `101`) and read and write its bytes through
//!   [`Service::upgraded`] and [`Upgraded`], on the same blocks, backpressure, deadlines and
//!   shutdown; WebSocket is one such service ([`ws`], feature `ws`).
//! * **Memory.** A connection holds a read block only while it has unread input and output
//!   blocks only until they are sent: an idle keep-alive connection holds none. After
//!   start-up, serving a request allocates nothing.
//!
//! ```no_run
//! use bufslab_http::{KnownHeader, Request};
//! use bufslab_server::{Config, Exchange, Server, Service, WorkerInfo};
//!
//! struct Hello;
//!
//! impl Service for Hello {
//!     type State = ();
//!
//!     fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut ()) {
//!         let _ = match req.path() {
//!             b"/" => ex
//!                 .respond(200)
//!                 .header(KnownHeader::ContentType, b"text/plain")
//!                 .body(b"Hello, World!"),
//!             _ => ex.respond(404).body(b""),
//!         };
//!     }
//! }
//!
//! let mut config = Config::default();
//! config.addr = "127.0.0.1:0".parse().unwrap();
//! let server = Server::start(config, |_: WorkerInfo| Hello)?;
//! println!("listening on http://{}", server.local_addr());
//! let summary = server.stop()?; // graceful: finishes responses in flight
//! println!("{summary}");
//! # Ok::<(), bufslab_server::ServerError>(())
//! ```
// Only the io_uring driver may use `unsafe` (requests that name memory the kernel reads).
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

// The layers, one folder each: the I/O-free HTTP/1.1 core (`proto/`), the TLS layer (`tls/`),
// the drivers that move bytes between sockets and connections (`driver/`), and the workers
// that own them (`worker/`). Their modules are named from the crate root below, so that every
// module is `crate::name` wherever it lives.
mod config;
mod driver;
#[cfg(any(all(test, feature = "ws"), feature = "fuzzing"))]
#[path = "../fuzz_harness/mod.rs"]
pub mod fuzzing;
mod proto;
mod server;
mod service;
mod shared;
mod stats;
mod tls;
mod worker;
#[cfg(feature = "ws")]
pub mod ws;

use driver::{epoll, link, sys, uring};
use proto::{
    body, body_writer, conn, deferred, exchange, exchange_state, out_queue, owned_body, protocol,
    response_error, static_response, tls_info, upgrade,
};
use worker::{timer, wait_queue};

pub use body_writer::BodyWriter;
pub use config::{
    Config, ConfigError, IoMode, Listener, MinBodyRate, PoolConfig, Strategy, MAX_LISTENERS,
    SMALL_BLOCK,
};
pub use deferred::{Deferred, Mailbox};
pub use exchange::{Exchange, Response, ResponseError, StaticHead, StaticResponse};
pub use owned_body::OwnedBody;
pub use server::{Server, ServerError, ServerHandle, Summary};
pub use service::{MakeService, Service, WorkerInfo};
pub use stats::{PoolStats, ServerStats};
pub use tls::{TlsConfig, DEFAULT_MAX_HANDSHAKES};
pub use tls_info::TlsInfo;
pub use upgrade::{Switch, UpgradeError, UpgradeEvent, Upgraded, WriteError};

// The README's examples compile as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
