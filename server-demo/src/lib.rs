//! `server-demo`: a thread-per-core HTTP/1.1 server whose request path never touches the heap.
//!
//! Built from two crates of this workspace: [`bufslab`] (a bounded pool of fixed-size I/O
//! blocks with per-thread caches) and [`bufslab_http`] (a zero-copy request parser, body
//! decoders and a response encoder), over `mio`.
//!
//! * N workers, each with its own `SO_REUSEPORT` listener, `mio::Poll`, preallocated
//!   connection slab, deadline lists and local cache of one shared pool; no cross-thread hop.
//! * Accept-many: a readable listener is drained up to `accept_batch` before serving.
//! * Rent on demand: a connection holds a read block only while it has unread input, and
//!   output blocks only until they are written; idle keep-alive connections hold none.
//! * Responses are encoded into pooled blocks; a pipelined batch leaves in one write call.
//!
//! ```no_run
//! use server_demo::{Config, Server};
//! let mut config = Config::default();
//! config.addr = "127.0.0.1:0".parse().unwrap();
//! config.workers = 2;
//! let server = Server::start(config)?;
//! println!("listening on http://{}", server.local_addr());
//! let summary = server.stop()?; // graceful: finishes responses in flight
//! println!("{summary}");
//! # Ok::<(), server_demo::ServerError>(())
//! ```
// Only the io_uring driver may use `unsafe` (requests that name memory the kernel reads).
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

mod answer;
mod body;
mod cli;
mod config;
mod conn;
mod epoll;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod out_queue;
mod routes;
mod server;
mod stats;
mod sys;
mod timer;
#[allow(unsafe_code)]
mod uring_driver;
mod wait_queue;
mod worker;

pub use cli::{parse_args, CliError, Command, USAGE};
pub use config::{Config, ConfigError, IoMode, PoolConfig, Strategy, SMALL_BLOCK};
pub use server::{Server, ServerError, ServerHandle, Summary};
pub use stats::{PoolStats, ServerStats};
