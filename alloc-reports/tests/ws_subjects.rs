//! The WebSocket peer subjects run every WebSocket scenario to the end, each echo checked byte
//! for byte, and their allocations are seen: a check of the measurement, not a gate on the
//! peers (their counts are reported, whatever they are). bufslab's own WebSocket echo binary
//! (bufslab-server's `ws_echo` example, under each driver) runs every WebSocket scenario too,
//! counted by the preloaded counter, and allocates nothing per message; a driver this machine
//! refuses (io_uring) is left out, saying why. One profiler per process, so one test.

use alloc_reports::measure::{self, Options, Profile};
use alloc_reports::subject::{builtin, Subject, WsEcho};
use alloc_reports::Scenario;
use bufslab_benches::WsPeer;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn ws_peers_are_measured() {
    let options = Options {
        requests: Some(50),
        warmup: 10,
    };
    for peer in WsPeer::ALL {
        let subject = WsEcho(peer);
        for scenario in Scenario::WEBSOCKET {
            let m = measure::run_profiled(
                &subject,
                scenario,
                options,
                Profile::Testing,
                &mut |_| {},
                drop,
            )
            .unwrap_or_else(|e| panic!("{}, {}: {e}", subject.name(), scenario.name()));
            eprintln!(
                "{} {}: {} messages, {} allocations, {} bytes",
                m.subject, m.scenario, m.requests, m.allocations, m.bytes
            );
            assert_eq!(m.requests, 50);
            // The server started, upgraded and served under the profiler.
            assert!(m.peak_heap_blocks > 0);
        }
        assert!(!subject.applies_to(Scenario::Plaintext));
        assert!(matches!(
            measure::run_profiled(
                &subject,
                Scenario::Json,
                options,
                Profile::Testing,
                &mut |_| {},
                drop
            ),
            Err(measure::MeasureError::NotApplicable)
        ));
    }
    for name in ["bufslab-ws-bin-epoll", "bufslab-ws-bin-uring"] {
        let bufslab = builtin()
            .into_iter()
            .find(|s| s.name() == name)
            .unwrap_or_else(|| panic!("the {name} subject is built in"));
        if let Some(reason) = bufslab.unavailable() {
            // Only the kernel's refusal of io_uring may leave a driver out.
            assert!(name.ends_with("uring"), "{name}: {reason}");
            eprintln!("{name}: skipped: {reason}");
            continue;
        }
        for scenario in Scenario::WEBSOCKET {
            let m = measure::run_profiled(
                bufslab.as_ref(),
                scenario,
                options,
                Profile::Testing,
                &mut |_| {},
                drop,
            )
            .unwrap_or_else(|e| panic!("{name}, {}: {e}", scenario.name()));
            eprintln!(
                "{name} {}: {} messages, {} allocations, {} bytes",
                m.scenario, m.requests, m.allocations, m.bytes
            );
            assert_eq!(m.requests, 50);
            assert_eq!(m.allocations, 0, "{name}, {}", scenario.name());
        }
    }
}
