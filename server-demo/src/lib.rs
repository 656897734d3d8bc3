//! `server-demo`: an application of [`bufslab_server`], the engine whose request path never
//! touches the heap, with four endpoints: `GET /plaintext`, `GET /json`, `POST /echo` and
//! `GET /stats` (HEAD of the GET routes).
//!
//! This crate is the endpoints ([`Demo`], a [`bufslab_server::Service`]), the command line
//! ([`parse_args`]) and the binary's `main`; everything else is the engine's, re-exported here
//! under the names the binary and its tests use.
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
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

mod cli;
mod routes;

pub use bufslab_server::{
    Config, ConfigError, IoMode, Listener, MinBodyRate, PoolConfig, PoolStats, ServerError,
    ServerHandle, ServerStats, Strategy, Summary, TlsConfig, SMALL_BLOCK,
};
pub use cli::{parse_args, CliError, Command, USAGE};
pub use routes::{Demo, Echo};

/// Starts the demo's endpoints on the engine.
#[derive(Debug)]
pub struct Server;

impl Server {
    /// [`bufslab_server::Server::start`] with the demo's service, and `Server: server-demo`
    /// unless the configuration names another.
    ///
    /// # Errors
    /// As [`bufslab_server::Server::start`].
    pub fn start(mut config: Config) -> Result<ServerHandle, ServerError> {
        config.server_name = config.server_name.or(Some(routes::SERVER_NAME));
        bufslab_server::Server::start(config, Demo::new)
    }
}
