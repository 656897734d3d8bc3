//! The server binaries as subjects, counted by the preloaded counter: server-demo's own binary
//! passes the same gate as the in-process subject under each I/O driver, over HTTP and over
//! HTTPS (no allocation per keep-alive request after the handshake with each suite, and no more
//! per full or resumed handshake than today's figure), the counter agrees with dhat on a server
//! that allocates (hyper, in process and as its binary), and nginx and may-minihttp run where
//! they can, hyper + tokio-rustls and nginx over HTTPS too. The binaries are built by the subjects themselves (`cargo
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
        // Every HTTP and HTTPS scenario; the handshakes with fewer connections, since each is
        // a TLS handshake of a debug build on both sides: one allocation more per connection
        // shows in a window of 20 as well as in one of 50.
        let (handshakes, others): (Vec<Scenario>, Vec<Scenario>) = Scenario::ALL
            .into_iter()
            .filter(|&sc| s.applies_to(sc))
            .partition(|sc| sc.https().is_some_and(|h| h.exchange.resumed().is_some()));
        assert_eq!(handshakes.len(), 6);
        let mut handshake_gate = Gate::default();
        handshake_gate.connections = 20;
        handshake_gate.warmup = 10;
        let mut verdict = Gate::default()
            .check_scenarios(s.as_ref(), &others)
            .unwrap_or_else(|e| panic!("{e}"));
        let handshake_verdict = handshake_gate
            .check_scenarios(s.as_ref(), &handshakes)
            .unwrap_or_else(|e| panic!("{e}"));
        verdict.measurements.extend(handshake_verdict.measurements);
        verdict.failures.extend(handshake_verdict.failures);
        assert_eq!(
            verdict.measurements.len(),
            Scenario::HTTP.len() + Scenario::HTTPS.len()
        );
        for m in &verdict.measurements {
            assert_eq!(m.method, Method::Preload);
            eprintln!(
                "{} {}: {} requests, {} allocations",
                m.subject, m.scenario, m.requests, m.allocations
            );
            // A handshake allocates (rustls's state, the ticket): a zero here would mean the
            // counter missed them, and the bound would prove nothing.
            if m.scenario.contains("handshake") {
                assert!(m.allocations >= m.requests, "{}: {m:?}", m.scenario);
            }
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

    // hyper + tokio-rustls over HTTPS: it allocates per keep-alive request and per handshake,
    // and the counter sees both.
    for (scenario, at_least) in [
        ("https-plaintext-aes256", 1.0),
        ("https-full-handshake-aes256", 10.0),
    ] {
        let scenario = Scenario::from_name(scenario).unwrap_or_else(|e| panic!("{e}"));
        let m = measure(hyper_bin.as_ref(), scenario, 100);
        let per = m.allocations_per_request();
        eprintln!("hyper-bin {}: {per:.3} per request", scenario.name());
        assert!(per >= at_least, "hyper-bin {}: {per}", scenario.name());
    }

    // may-minihttp's binary, and nginx where it is installed (over HTTPS too): they run, and
    // what they count is reported, not gated.
    for name in ["may-minihttp-bin", "nginx"] {
        let s = subject(name);
        if let Some(reason) = s.unavailable() {
            assert_ne!(name, "may-minihttp-bin", "{name} cannot run: {reason}");
            eprintln!("{name}: skipped: {reason}");
            continue;
        }
        let https = Scenario::HTTPS
            .into_iter()
            .filter(|h| s.applies_to(*h) && h.name().ends_with("-aes256"))
            .filter(|h| matches!(h.http(), Scenario::Plaintext | Scenario::ConnectClose));
        for scenario in [Scenario::Plaintext, Scenario::ConnectClose]
            .into_iter()
            .chain(https)
        {
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
