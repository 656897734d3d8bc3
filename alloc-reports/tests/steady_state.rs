//! Every scenario against server-demo with few requests: a keep-alive scenario must not
//! allocate at all in its measured window, and a per-connection one must stay within
//! [`ALLOCS_PER_CONNECTION_BOUND`]. The gate is server-demo's alone (other subjects are
//! reported, not gated). dhat allows one profiler per process, so this file holds a single
//! test that walks the scenarios one profiler after another.

use alloc_reports::measure::{self, Options, Profile};
use alloc_reports::scenario::ALLOCS_PER_CONNECTION_BOUND;
use alloc_reports::subject::ServerDemo;
use alloc_reports::{Scenario, Shape};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Small enough for CI on two cores, large enough that an allocation per request or per
/// connection cannot hide.
const REQUESTS: u64 = 200;
const CONNECTIONS: u64 = 50;
const WARMUP: u64 = 50;

#[test]
fn no_scenario_allocates_per_request() {
    let subject = ServerDemo::default();
    let mut failures = Vec::new();
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
            &subject,
            scenario,
            options,
            Profile::Testing,
            &mut |_| {},
            drop,
        )
        .unwrap_or_else(|e| panic!("scenario {}: {e}", scenario.name()));
        // The server's pool slabs are allocated under the profiler: a zero peak would mean
        // dhat is not counting, and every zero below would be vacuous.
        assert!(m.peak_heap_bytes > 0, "dhat saw no heap at all");
        eprintln!(
            "{}: {} requests, {} allocations, {} bytes",
            m.scenario, m.requests, m.allocations, m.bytes
        );
        match m.allocations_per_connection() {
            None if m.allocations > 0 => failures.push(format!(
                "{}: {} allocations in {} keep-alive requests ({} bytes)",
                m.scenario, m.allocations, m.requests, m.bytes
            )),
            Some(per) if per > ALLOCS_PER_CONNECTION_BOUND => failures.push(format!(
                "{}: {per} allocations per new connection, bound {ALLOCS_PER_CONNECTION_BOUND}",
                m.scenario
            )),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "allocations in steady state (run `cargo run --release -p alloc-reports -- --scenario NAME` and open out/dhat-server-demo-NAME.json in dh_view.html to see where):\n{}",
        failures.join("\n")
    );
}
