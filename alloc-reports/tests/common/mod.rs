//! What the tests share: telling the kernel's refusal of io_uring, where an io_uring subject
//! skips, from a driver that fails, where the test fails.

use std::io::Write;

use bufslab_uring::Error;
use server_demo::{Config, IoMode, Server, ServerError};

/// Skips the io_uring subject `subject`, which cannot run for `reason`, where the kernel
/// refuses io_uring to this process: `EPERM` or `EACCES` (a seccomp profile, a security
/// module, `kernel.io_uring_disabled`) or `ENOSYS`. The skip is said on the stderr handle,
/// which libtest does not capture, so a passing run shows it. Panics where io_uring runs here
/// (the subject is broken, not refused), and under `BUFSLAB_REQUIRE_URING=1`, which CI sets
/// where io_uring runs.
pub fn skip_uring_subject(subject: &str, reason: &str) {
    let Some(refusal) = kernel_refusal() else {
        panic!("{subject} cannot run ({reason}), yet io_uring runs here");
    };
    assert!(
        std::env::var("BUFSLAB_REQUIRE_URING").as_deref() != Ok("1"),
        "{subject} would be skipped ({refusal}), but BUFSLAB_REQUIRE_URING=1 requires io_uring"
    );
    let _ = writeln!(std::io::stderr(), "{subject}: skipped: {reason}");
}

/// Why the kernel refuses io_uring, from a server started on it in this process (the errno
/// as [`bufslab_uring::Error`] classifies it); `None` where it runs. Panics on any other
/// failure to start or stop it.
fn kernel_refusal() -> Option<String> {
    let probe = Server::start(Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        io: IoMode::Uring,
        workers: 1,
        max_conns: 4,
        evict_interval: None,
        ..Config::default()
    });
    match probe {
        Ok(server) => {
            if let Err(e) = server.stop() {
                panic!("a server on io_uring did not stop cleanly: {e}");
            }
            None
        }
        Err(ServerError::Uring(
            e @ (Error::Disabled { .. } | Error::Denied | Error::NotSupported),
        )) => Some(e.to_string()),
        Err(e) => panic!("a server on io_uring did not start, and not for a refusal: {e}"),
    }
}
