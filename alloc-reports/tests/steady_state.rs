//! Every scenario against server-demo with few requests, under each I/O driver (epoll, then
//! io_uring): a keep-alive scenario must not allocate at all in its measured window, and a
//! per-connection one must stay within [`ALLOCS_PER_CONNECTION_BOUND`]. The gate is
//! server-demo's alone (other subjects are reported, not gated). Where io_uring is refused,
//! the uring runs are skipped with the reason printed; epoll's always run. dhat allows one
//! profiler per process, so this file holds a single test that walks the drivers and
//! scenarios one profiler after another.

use alloc_reports::measure::{self, Options, Profile};
use alloc_reports::scenario::ALLOCS_PER_CONNECTION_BOUND;
use alloc_reports::subject::{ServerDemo, Subject};
use alloc_reports::{Scenario, Shape};
use server_demo::IoMode;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Small enough for CI on two cores, large enough that an allocation per request or per
/// connection cannot hide.
const REQUESTS: u64 = 200;
const CONNECTIONS: u64 = 50;
const WARMUP: u64 = 50;

#[test]
fn no_scenario_allocates_per_request() {
    let mut failures = Vec::new();
    for io in [IoMode::Epoll, IoMode::Uring] {
        let subject = ServerDemo::with_io(io);
        if let Some(reason) = subject.unavailable() {
            assert_ne!(io, IoMode::Epoll, "epoll cannot be refused: {reason}");
            eprintln!("{}: skipped: {reason}", subject.name());
            continue;
        }
        gate(&subject, io, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "allocations in steady state (run `cargo run --release -p alloc-reports -- --scenario NAME --subject SUBJECT` and open out/dhat-SUBJECT-NAME.json in dh_view.html to see where):\n{}",
        failures.join("\n")
    );
}

/// Runs every scenario against `subject`, adding a line to `failures` for each that
/// allocates in its window (keep-alive) or beyond the bound per new connection.
fn gate(subject: &ServerDemo, io: IoMode, failures: &mut Vec<String>) {
    for scenario in Scenario::ALL {
        let requests = match scenario.shape() {
            Shape::KeepAlive => REQUESTS,
            Shape::PerConnection => CONNECTIONS,
        };
        let options = Options {
            requests: Some(requests),
            warmup: WARMUP,
        };
        let m = measure::run_profiled(
            subject,
            scenario,
            options,
            Profile::Testing,
            &mut |_| {},
            drop,
        )
        .unwrap_or_else(|e| panic!("{}, {}: {e}", subject.name(), scenario.name()));
        // The server's pool slabs are allocated under the profiler: a zero peak would mean
        // dhat is not counting, and every zero below would be vacuous.
        assert!(m.peak_heap_bytes > 0, "dhat saw no heap at all");
        // The driver that ran is the one asked for: no silent fallback to epoll.
        assert_eq!(m.driver, Some(io.name()), "{}", subject.name());
        eprintln!(
            "{} {}: {} requests, {} allocations, {} bytes",
            m.subject, m.scenario, m.requests, m.allocations, m.bytes
        );
        match m.allocations_per_connection() {
            None if m.allocations > 0 => failures.push(format!(
                "{} {}: {} allocations in {} keep-alive requests ({} bytes)",
                m.subject, m.scenario, m.allocations, m.requests, m.bytes
            )),
            Some(per) if per > ALLOCS_PER_CONNECTION_BOUND => failures.push(format!(
                "{} {}: {per} allocations per new connection, bound {ALLOCS_PER_CONNECTION_BOUND}",
                m.subject, m.scenario
            )),
            _ => {}
        }
    }
}
