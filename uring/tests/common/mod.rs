//! Helpers of the io_uring tests: a ring (or the reason there is none), a loopback TCP pair, and
//! a receive armed on a buffer group.
#![allow(dead_code)] // each test binary uses its own subset

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

use bufslab_uring::{Error, Features};
use io_uring::{cqueue, opcode, types, IoUring};

/// A ring of `entries`, or `None` after printing `skipped: <reason>` where the kernel refuses
/// io_uring to this process: `EPERM` or `EACCES` (a container's seccomp profile, a security
/// module, `kernel.io_uring_disabled`) or `ENOSYS` (no io_uring in this kernel). Any other
/// failure, provided buffer rings refused (`EINVAL`) among them, is a test failure, and so is
/// a refusal under `BUFSLAB_REQUIRE_URING=1` (CI sets it where io_uring runs).
pub fn ring_or_skip(test: &str, entries: u32) -> Option<IoUring> {
    match Features::probe() {
        Ok(_) => {}
        Err(e) if e.is_kernel_refusal() => {
            skip(test, &e);
            return None;
        }
        Err(e) => panic!("{test}: probing io_uring: {e}"),
    }
    match IoUring::new(entries) {
        Ok(ring) => Some(ring),
        Err(e) => match Error::classify(e) {
            e if e.is_kernel_refusal() => {
                skip(test, &e);
                None
            }
            e => panic!("{test}: setting up io_uring: {e}"),
        },
    }
}

/// Says why `test` is skipped, on the stderr handle: libtest captures `println!` and
/// `eprintln!` of a passing test, and a skip must show.
fn skip(test: &str, why: &Error) {
    assert!(
        std::env::var("BUFSLAB_REQUIRE_URING").as_deref() != Ok("1"),
        "{test} would be skipped ({why}), but BUFSLAB_REQUIRE_URING=1 requires io_uring"
    );
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
}

/// A connected loopback pair: (client, server).
pub fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    client.set_nodelay(true).unwrap();
    (client, server)
}

/// Arms a multishot receive on `socket` selecting from `group`, tagged `user_data`.
pub fn arm_recv(ring: &mut IoUring, socket: &TcpStream, group: u16, user_data: u64) {
    let sqe = opcode::RecvMulti::new(types::Fd(socket.as_raw_fd()), group)
        .build()
        .user_data(user_data);
    // SAFETY: the request names no memory but the buffer group, which the caller keeps
    // registered while the request can complete; the socket outlives it.
    unsafe { ring.submission().push(&sqe).unwrap() };
}

/// Arms a multishot bundle receive on `socket` selecting from `group`, tagged `user_data`.
pub fn arm_recv_bundle(ring: &mut IoUring, socket: &TcpStream, group: u16, user_data: u64) {
    let sqe = opcode::RecvMultiBundle::new(types::Fd(socket.as_raw_fd()), group)
        .build()
        .user_data(user_data);
    // SAFETY: as in `arm_recv`.
    unsafe { ring.submission().push(&sqe).unwrap() };
}

/// Submits what is queued and waits for at least one completion, then returns the next one.
pub fn next_cqe(ring: &mut IoUring) -> cqueue::Entry {
    loop {
        if let Some(cqe) = ring.completion().next() {
            return cqe;
        }
        ring.submit_and_wait(1).unwrap();
    }
}

/// The byte at offset `i` of test stream `stream`: position-dependent, so a block received out
/// of place or twice shows.
pub fn stream_byte(stream: u64, i: u64) -> u8 {
    (i.wrapping_mul(31).wrapping_add(stream.wrapping_mul(101)) % 251) as u8
}

/// `len` bytes of stream `stream` from offset `from`.
pub fn stream_bytes(stream: u64, from: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| stream_byte(stream, from + i))
        .collect()
}
