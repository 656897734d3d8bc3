//! The WebSocket load harness's peer echo servers as subjects: `bufslab_benches::WsEchoServer`
//! (tokio-tungstenite, fastwebsockets over a hyper upgrade), the servers of `ws_tungstenite`
//! and `ws_fastwebsockets`, with one worker.

use std::net::SocketAddr;

use bufslab_benches::{WsEchoServer, WsPeer};

use super::{Running, Subject, SubjectError};
use crate::scenario::Scenario;

/// A peer WebSocket echo server, in process (counted by dhat), named `ws-<peer>`. Only the
/// WebSocket scenarios apply. Reported, not gated.
#[derive(Clone, Copy, Debug)]
pub struct WsEcho(pub WsPeer);

impl Subject for WsEcho {
    fn name(&self) -> &str {
        match self.0 {
            WsPeer::Tungstenite => "ws-tungstenite",
            WsPeer::FastWebSockets => "ws-fastwebsockets",
        }
    }

    fn applies_to(&self, scenario: Scenario) -> bool {
        scenario.websocket_payload().is_some()
    }

    fn start(&self, _: Scenario) -> Result<Box<dyn Running>, SubjectError> {
        let server = WsEchoServer::start(self.0, SocketAddr::from(([127, 0, 0, 1], 0)), 1)?;
        Ok(Box::new(server))
    }
}

impl Running for WsEchoServer {
    fn local_addr(&self) -> SocketAddr {
        WsEchoServer::local_addr(self)
    }

    fn open_connections(&self) -> Option<u64> {
        Some(WsEchoServer::open_connections(self))
    }

    fn stop(self: Box<Self>) -> Result<(), SubjectError> {
        WsEchoServer::stop(*self)?;
        Ok(())
    }
}
