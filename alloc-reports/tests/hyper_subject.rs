//! The hyper subject runs and its allocations are seen: a check of the measurement, not a gate
//! on hyper (its counts are reported, whatever they are). A server that allocates per request
//! and per connection must show it in the window; were dhat not counting, or the window in the
//! wrong place, server-demo's zeros in `steady_state` would be vacuous. One profiler per
//! process, so one test.

use alloc_reports::measure::{self, Options, Profile};
use alloc_reports::subject::{Hyper, Subject};
use alloc_reports::Scenario;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn hyper_allocations_are_counted() {
    let options = Options {
        requests: Some(100),
        warmup: 20,
    };
    for scenario in [Scenario::Plaintext, Scenario::ConnectClose] {
        let m = measure::run_profiled(
            &Hyper,
            scenario,
            options,
            Profile::Testing,
            &mut |_| {},
            drop,
        )
        .unwrap_or_else(|e| panic!("hyper, {}: {e}", scenario.name()));
        eprintln!(
            "hyper {}: {} requests, {} allocations",
            m.scenario, m.requests, m.allocations
        );
        assert_eq!(m.subject, "hyper");
        assert!(m.pool.is_none() && m.strategy.is_none());
        assert!(
            m.allocations >= m.requests,
            "hyper {}: {} allocations in {} requests: fewer than one per request",
            m.scenario,
            m.allocations,
            m.requests
        );
    }
    assert!(matches!(
        measure::run_profiled(
            &Hyper,
            Scenario::PlaintextStack,
            options,
            Profile::Testing,
            &mut |_| {},
            drop
        ),
        Err(measure::MeasureError::NotApplicable)
    ));
    assert!(!Hyper.applies_to(Scenario::PlaintextQueue));
}
