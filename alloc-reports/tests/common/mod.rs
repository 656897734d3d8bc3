//! What the tests share: telling the kernel's refusal of io_uring, where an io_uring subject
//! skips, from a driver that fails, where the test fails. The probe and the skip are
//! server-demo's test helpers (the subjects are server-demo), included as they are.

#[path = "../../../server-demo/tests/common/mod.rs"]
mod demo;

/// Skips the io_uring subject `subject`, which cannot run for `reason`, where the kernel
/// refuses io_uring to this process: `EPERM` or `EACCES` (a seccomp profile, a security
/// module, `kernel.io_uring_disabled`) or `ENOSYS`. The skip is said where a passing run shows
/// it. Panics where io_uring runs here (the subject is broken, not refused), and under
/// `BUFSLAB_REQUIRE_URING=1`, which CI sets where io_uring runs.
pub fn skip_uring_subject(subject: &str, reason: &str) {
    let Some(refusal) = demo::uring_refused() else {
        panic!("{subject} cannot run ({reason}), yet io_uring runs here");
    };
    demo::skip_uring(subject, &format!("{reason} ({refusal})"));
}
