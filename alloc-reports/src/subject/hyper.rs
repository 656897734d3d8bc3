//! The hyper 1.x baseline as a subject: `bufslab_benches::HyperServer`, the server of the load
//! harness's `hyper_baseline`, with one worker.

use std::net::SocketAddr;

use bufslab_benches::HyperServer;

use super::{Running, Subject, SubjectError};
use crate::scenario::Scenario;

/// hyper 1.x on a current-thread tokio runtime, tuned as in the load harness. Reported, not
/// gated: it allocates per request and per connection by design.
///
/// Every HTTP scenario applies but the pool free-list pair and `malformed-400`: hyper closes a
/// connection whose head does not parse without answering it, so that exchange, which waits
/// for a `400`, cannot complete.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hyper;

impl Subject for Hyper {
    fn name(&self) -> &str {
        "hyper"
    }

    fn applies_to(&self, scenario: Scenario) -> bool {
        scenario.is_http() && scenario.strategy().is_none() && scenario != Scenario::Malformed
    }

    fn start(&self, _: Scenario) -> Result<Box<dyn Running>, SubjectError> {
        let server = HyperServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), 1)?;
        Ok(Box::new(server))
    }
}

impl Running for HyperServer {
    fn local_addr(&self) -> SocketAddr {
        HyperServer::local_addr(self)
    }

    fn open_connections(&self) -> Option<u64> {
        Some(HyperServer::open_connections(self))
    }

    fn stop(self: Box<Self>) -> Result<(), SubjectError> {
        HyperServer::stop(*self)?;
        Ok(())
    }
}
