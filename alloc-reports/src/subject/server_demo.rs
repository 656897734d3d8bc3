//! server-demo as a subject: `server_demo::Server` on port 0.

use std::net::SocketAddr;

use ::server_demo::{Config, IoMode, PoolStats, Server, ServerError, ServerHandle};

use super::{Running, Subject, SubjectError};
use crate::scenario::Scenario;

/// server-demo, started with [`ServerDemo::config`] for each scenario.
///
/// The default has one worker (warm-up fills the one cache the window uses), idle eviction
/// off (it runs on a timer, every 10 s in the binary, not per request, and its bookkeeping
/// would land in whichever window it happened to fall into) and the `auto` I/O driver; it is
/// named `server-demo-auto`. [`ServerDemo::with_io`] is the same server on a given driver,
/// and a variant (another configuration) is [`ServerDemo::with_config`] under a name of its
/// own.
///
/// # Examples
///
/// ```
/// use alloc_reports::subject::{ServerDemo, Subject};
/// use server_demo::IoMode;
///
/// let uring = ServerDemo::with_io(IoMode::Uring);
/// assert_eq!(uring.name(), "server-demo-uring");
/// assert_eq!(uring.io(), Some(IoMode::Uring));
///
/// let mut config = ServerDemo::default().base().clone();
/// config.accept_batch = 1;
/// let accept_one = ServerDemo::with_config("server-demo-accept-one", config);
/// assert_eq!(accept_one.name(), "server-demo-accept-one");
/// ```
#[derive(Clone, Debug)]
pub struct ServerDemo {
    name: String,
    base: Config,
}

impl Default for ServerDemo {
    fn default() -> Self {
        ServerDemo::with_io(IoMode::Auto)
    }
}

impl ServerDemo {
    /// server-demo on the I/O driver `io`, named `server-demo-<io>` (`server-demo-epoll`,
    /// `server-demo-uring`, `server-demo-auto`), with one worker and idle eviction off.
    #[must_use]
    pub fn with_io(io: IoMode) -> Self {
        ServerDemo::with_config(
            format!("server-demo-{}", io.name()),
            Config {
                workers: 1,
                evict_interval: None,
                io,
                ..Config::default()
            },
        )
    }

    /// server-demo with `base` as its configuration, reported as `name` (see
    /// [`Subject::name`]). The listen address is replaced by `127.0.0.1:0`, and a scenario's
    /// free list by what the scenario asks for.
    #[must_use]
    pub fn with_config(name: impl Into<String>, base: Config) -> Self {
        ServerDemo {
            name: name.into(),
            base,
        }
    }

    /// The configuration before a scenario's changes.
    #[must_use]
    pub fn base(&self) -> &Config {
        &self.base
    }

    /// The configuration `scenario` runs with.
    #[must_use]
    pub fn config(&self, scenario: Scenario) -> Config {
        let mut config = self.base.clone();
        config.addr = SocketAddr::from(([127, 0, 0, 1], 0));
        if let Some(strategy) = scenario.strategy() {
            config.pool.strategy = strategy;
        }
        config
    }
}

impl Subject for ServerDemo {
    fn name(&self) -> &str {
        &self.name
    }

    /// Every HTTP scenario. server-demo does not serve WebSocket upgrades (yet): its
    /// WebSocket echo is measured as a binary, `bufslab-ws-bin`, once it has one. Nor the
    /// HTTPS ones: their client's rustls allocates in this process; server-demo's binary has
    /// them (`server-demo-bin-*`), and `server-demo/tests/dhat_tls.rs` counts HTTPS in process
    /// with a client in another.
    fn applies_to(&self, scenario: Scenario) -> bool {
        scenario.is_http()
    }

    fn start(&self, scenario: Scenario) -> Result<Box<dyn Running>, SubjectError> {
        let config = self.config(scenario);
        let free_list = config.pool.strategy.name();
        let server = Server::start(config)?;
        Ok(Box::new(Started { server, free_list }))
    }

    fn io(&self) -> Option<IoMode> {
        Some(self.base.io)
    }

    /// Only `uring` can be refused: a trial start that fails with the io_uring error gives
    /// the reason. Any other failure is left to the run, which reports it as an error.
    fn unavailable(&self) -> Option<String> {
        if self.base.io != IoMode::Uring {
            return None;
        }
        match Server::start(self.config(Scenario::Plaintext)) {
            Err(ServerError::Uring(e)) => Some(format!("io_uring refused: {e}")),
            Err(_) => None,
            Ok(server) => {
                // A failed stop here would fail the real runs too, and be reported there.
                let _ = server.stop();
                None
            }
        }
    }
}

/// A started server-demo.
struct Started {
    server: ServerHandle,
    free_list: &'static str,
}

impl Running for Started {
    fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    fn open_connections(&self) -> Option<u64> {
        Some(self.server.stats().connections_open)
    }

    fn pool(&self) -> Option<PoolStats> {
        Some(self.server.stats().pool)
    }

    fn free_list(&self) -> Option<&'static str> {
        Some(self.free_list)
    }

    fn driver(&self) -> Option<&'static str> {
        Some(self.server.stats().driver)
    }

    fn stop(self: Box<Self>) -> Result<(), SubjectError> {
        self.server.stop()?;
        Ok(())
    }
}
