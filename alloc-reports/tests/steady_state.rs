//! Every scenario against server-demo with few requests, under each I/O driver (epoll, then
//! io_uring), through the library's gate ([`alloc_reports::gate::Gate`]): a keep-alive scenario
//! must not allocate at all in its measured window, and a per-connection one must stay within
//! [`ALLOCS_PER_CONNECTION_BOUND`](alloc_reports::scenario::ALLOCS_PER_CONNECTION_BOUND). The
//! gate is server-demo's alone (other subjects are reported, not gated). Where the kernel
//! refuses io_uring, the uring runs are skipped with the reason printed (`common`); epoll's
//! always run. dhat allows one profiler at a time, so this file holds a single test that walks
//! the drivers and scenarios one profiler after another.

mod common;

use alloc_reports::gate::Gate;
use alloc_reports::subject::{ServerDemo, Subject};
use alloc_reports::Scenario;
use server_demo::IoMode;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn no_scenario_allocates_per_request() {
    let mut failures = Vec::new();
    for io in [IoMode::Epoll, IoMode::Uring] {
        let subject = ServerDemo::with_io(io);
        if let Some(reason) = subject.unavailable() {
            assert_ne!(io, IoMode::Epoll, "epoll cannot be refused: {reason}");
            common::skip_uring_subject(subject.name(), &reason);
            continue;
        }
        let verdict = Gate::default()
            .check(&subject)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verdict.measurements.len(), Scenario::HTTP.len());
        for m in &verdict.measurements {
            // The driver that ran is the one asked for: no silent fallback to epoll.
            assert_eq!(m.driver, Some(io.name()), "{}", subject.name());
            eprintln!(
                "{} {}: {} requests, {} allocations, {} bytes",
                m.subject, m.scenario, m.requests, m.allocations, m.bytes
            );
        }
        failures.extend(verdict.failures);
    }
    let failed: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert!(
        failures.is_empty(),
        "allocations in steady state (run `cargo run --release -p alloc-reports -- --scenario NAME --subject SUBJECT` and open out/dhat-SUBJECT-NAME.json in dh_view.html to see where):\n{}",
        failed.join("\n")
    );
}
