//! The server binaries as subjects, counted by the preloaded counter: server-demo's own binary
//! passes the same gate as the in-process subject under each I/O driver, the counter agrees
//! with dhat on a server that allocates (hyper, in process and as its binary), and nginx and
//! may-minihttp run where they can. The binaries are built by the subjects themselves (`cargo
//! build`, this test's profile), a no-op after `cargo test --workspace` has built them. dhat
//! runs one profiler at a time, so this file holds a single test.

mod common;

use alloc_reports::gate::Gate;
use alloc_reports::measure::{Measurement, Method};
use alloc_reports::subject::{builtin, Hyper, Subject};
use alloc_reports::Scenario;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn subject(name: &str) -> Box<dyn Subject> {
    builtin()
        .into_iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no built-in subject {name}"))
}

/// One scenario's measurement, whatever the gate would say of it.
fn measure(subject: &dyn Subject, scenario: Scenario, requests: u64) -> Measurement {
    let mut gate = Gate::default();
    gate.requests = requests;
    gate.connections = requests;
    let mut verdict = gate
        .check_scenarios(subject, &[scenario])
        .unwrap_or_else(|e| panic!("{e}"));
    verdict.measurements.remove(0)
}

#[test]
fn server_binaries_are_counted() {
    // server-demo's binary: zero per request and per new connection, every scenario, under
    // each driver, with the counter seeing its start-up heap (the gate checks that).
    for name in ["server-demo-bin-epoll", "server-demo-bin-uring"] {
        let s = subject(name);
        assert_eq!(s.method(), Method::Preload);
        if let Some(reason) = s.unavailable() {
            assert_ne!(
                name, "server-demo-bin-epoll",
                "epoll cannot be refused: {reason}"
            );
            common::skip_uring_subject(name, &reason);
            continue;
        }
        let verdict = Gate::default()
            .check(s.as_ref())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verdict.measurements.len(), Scenario::HTTP.len());
        for m in &verdict.measurements {
            assert_eq!(m.method, Method::Preload);
            eprintln!(
                "{} {}: {} requests, {} allocations",
                m.subject, m.scenario, m.requests, m.allocations
            );
        }
        verdict.assert_passed();
    }

    // A server that allocates: the counter in hyper's binary sees what dhat sees in hyper in
    // process, to within 0.1 per request (both count a realloc as one allocation).
    let hyper_bin = subject("hyper-bin");
    if let Some(reason) = hyper_bin.unavailable() {
        panic!("hyper-bin cannot run: {reason}");
    }
    for scenario in [Scenario::Plaintext, Scenario::ConnectClose] {
        let dhat = measure(&Hyper, scenario, 300);
        let preload = measure(hyper_bin.as_ref(), scenario, 300);
        let (a, b) = (
            dhat.allocations_per_request(),
            preload.allocations_per_request(),
        );
        eprintln!(
            "{}: hyper {a:.3} per request (dhat), hyper-bin {b:.3} (preload)",
            scenario.name()
        );
        assert!(a >= 1.0, "hyper {}: {a} per request", scenario.name());
        assert!(
            (a - b).abs() <= 0.1,
            "{}: dhat counts {a:.3} per request in hyper, the counter {b:.3} in its binary",
            scenario.name()
        );
    }

    // may-minihttp's binary, and nginx where it is installed: they run, and what they count
    // is reported, not gated.
    for name in ["may-minihttp-bin", "nginx"] {
        let s = subject(name);
        if let Some(reason) = s.unavailable() {
            assert_ne!(name, "may-minihttp-bin", "{name} cannot run: {reason}");
            eprintln!("{name}: skipped: {reason}");
            continue;
        }
        for scenario in [Scenario::Plaintext, Scenario::ConnectClose] {
            let m = measure(s.as_ref(), scenario, 200);
            assert!(m.peak_heap_bytes > 0, "{name}: the counter saw no heap");
            eprintln!(
                "{name} {}: {:.3} allocations per request",
                scenario.name(),
                m.allocations_per_request()
            );
        }
    }
}
