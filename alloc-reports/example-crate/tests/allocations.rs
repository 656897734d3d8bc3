//! The server's allocations per request, gated with alloc-reports as its README shows: the
//! scenarios this server answers, few requests each, zero allocations allowed per keep-alive
//! request and per new connection. And the gate is seen to fail for the same server made to
//! allocate per request, so its pass is not vacuous. dhat runs one profiler at a time: one
//! test.

use std::net::SocketAddr;

use alloc_reports::gate::{Failure, Gate};
use alloc_reports::subject::{Running, Subject, SubjectError};
use alloc_reports::Scenario;
use tiny_server::{Options, Server};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

struct Tiny {
    name: &'static str,
    options: Options,
}

impl Subject for Tiny {
    fn name(&self) -> &str {
        self.name
    }

    fn applies_to(&self, scenario: Scenario) -> bool {
        matches!(
            scenario,
            Scenario::Plaintext
                | Scenario::Json
                | Scenario::Pipelined
                | Scenario::NotFound
                | Scenario::ConnectClose
        )
    }

    fn start(&self, _: Scenario) -> Result<Box<dyn Running>, SubjectError> {
        let server = Server::start(SocketAddr::from(([127, 0, 0, 1], 0)), self.options)?;
        Ok(Box::new(TinyRunning(Some(server))))
    }
}

struct TinyRunning(Option<Server>);

impl Running for TinyRunning {
    fn local_addr(&self) -> SocketAddr {
        self.0
            .as_ref()
            .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), Server::local_addr)
    }

    fn open_connections(&self) -> Option<u64> {
        self.0.as_ref().map(Server::open_connections)
    }

    fn stop(mut self: Box<Self>) -> Result<(), SubjectError> {
        if let Some(server) = self.0.take() {
            server.stop();
        }
        Ok(())
    }
}

#[test]
fn no_allocation_per_request() {
    let good = Tiny {
        name: "tiny",
        options: Options::default(),
    };
    let verdict = Gate::default()
        .check(&good)
        .expect("every scenario measured");
    assert_eq!(verdict.measurements.len(), 5);
    verdict.assert_passed();

    let bad = Tiny {
        name: "tiny-allocating",
        options: Options {
            allocate_per_request: true,
        },
    };
    let verdict = Gate::default()
        .check(&bad)
        .expect("every scenario measured");
    assert!(!verdict.passed());
    assert!(verdict.failures.iter().any(|f| matches!(
        f,
        Failure::PerRequest { scenario: Scenario::Plaintext, allocations, requests, .. }
            if allocations == requests
    )));
    assert!(verdict.to_string().contains("tiny-allocating plaintext"));
}
