//! server-demo as a subject: `server_demo::Server` on port 0.

use std::net::SocketAddr;

use ::server_demo::{Config, PoolStats, Server, ServerHandle};

use super::{Running, Subject, SubjectError};
use crate::scenario::Scenario;

/// server-demo, started with [`ServerDemo::config`] for each scenario.
///
/// The default has one worker (warm-up fills the one cache the window uses) and idle
/// eviction off: it runs on a timer (every 10 s in the binary), not per request, and its
/// bookkeeping would land in whichever window it happened to fall into. A variant (another
/// configuration) is [`ServerDemo::with_config`] under a name of its own.
///
/// # Examples
///
/// ```
/// use alloc_reports::subject::{ServerDemo, Subject};
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
        ServerDemo::with_config(
            "server-demo",
            Config {
                workers: 1,
                evict_interval: None,
                ..Config::default()
            },
        )
    }
}

impl ServerDemo {
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

    fn applies_to(&self, _: Scenario) -> bool {
        true
    }

    fn start(&self, scenario: Scenario) -> Result<Box<dyn Running>, SubjectError> {
        let config = self.config(scenario);
        let free_list = config.pool.strategy.name();
        let server = Server::start(config)?;
        Ok(Box::new(Started { server, free_list }))
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
