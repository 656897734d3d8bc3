//! Waiting for the pool: a pool held by partial heads (600 connections that each sent part of a
//! head, against a 1 MiB pool of 4 KiB blocks, a few hundred of them) must neither delay a new
//! client by more than one header timeout nor cost hundreds of retries per waiting connection.
//!
//! The tests run one at a time (`SERIAL`): each holds 600 connections open, and their time
//! bounds should not measure the other tests' load on a small machine.

mod common;

use std::io::{ErrorKind, Read};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;
use server_demo::{Config, PoolConfig, ServerHandle, ServerStats};

/// Connections that send part of a head and stay.
const HOLDERS: usize = 600;

/// A partial head: the final empty line never comes (until a test sends it).
const PARTIAL: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: a\r\n";

static SERIAL: Mutex<()> = Mutex::new(());

/// One worker, 1000 slots, and a pool of one preallocated 64-block slab, bounded at 1 MiB: the
/// reproduction's `--workers 1 --pool-prealloc-slabs 1 --pool-max-bytes 1048576`.
fn starved_config(header_timeout: Duration) -> Config {
    Config {
        workers: 1,
        max_conns: 1000,
        header_timeout,
        pool: PoolConfig {
            prealloc_slabs: 1,
            max_bytes: 1 << 20,
            ..PoolConfig::default()
        },
        ..config()
    }
}

/// Raises this process's soft descriptor limit to its hard limit: a test holds both ends of
/// 600 connections, more than the 1024 a default soft limit allows.
fn raise_fd_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` only writes the `rlimit` it is given, which lives on this stack.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return;
    }
    r.rlim_cur = r.rlim_max;
    // SAFETY: `setrlimit` only reads the `rlimit` it is given. Where it refuses, the limit in
    // force may still do.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) };
}

/// Opens the holders, each with its partial head sent, and waits until the server has taken in
/// what it can: every one accepted, or a second at most (a server that leaves connections in
/// the backlog while the pool is exhausted never accepts them all). Returns them with when
/// each sent its head.
fn hold_the_pool(server: &ServerHandle) -> Vec<(Client, Instant)> {
    raise_fd_limit();
    let addr = server.local_addr();
    let holders: Vec<(Client, Instant)> = (0..HOLDERS)
        .map(|_| {
            let mut c = Client::new(addr);
            c.send(PARTIAL);
            (c, Instant::now())
        })
        .collect();
    wait_until("the pool exhausted", || server.stats().pool_waits > 0);
    let start = Instant::now();
    while server.stats().connections_accepted < HOLDERS as u64
        && start.elapsed() < Duration::from_secs(1)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    holders
}

/// The connections waiting for a block now: those open less those holding one (each holder
/// holds its read block, and nothing else).
fn waiting(s: &ServerStats) -> u64 {
    s.connections_open
        .saturating_sub(s.pool.rented_blocks as u64)
}

/// Reads until the server ends the connection: what it sent (a 408, or nothing), or `None` if
/// it is still open at `by`.
fn until_cut(c: &mut Client, by: Instant) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let left = by.saturating_duration_since(Instant::now());
        c.stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match c.stream.read(&mut buf) {
            Ok(0) => return Some(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe) => {
                return Some(got)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None
            }
            Err(e) => panic!("reading a holder: {e}"),
        }
    }
}

driver_test! {
/// A head's deadline runs from its first byte whether or not a block was free to read it: the
/// holders are all cut one header timeout after their heads began, and a new client is
/// answered then, not after a wave of cuts per pool's worth of holders.
fn a_new_client_waits_at_most_one_header_timeout() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let header_timeout = Duration::from_secs(3);
    let server = start(starved_config(header_timeout));
    let mut holders = hold_the_pool(&server);
    // Well behind the holders' heads, so that the turn which cuts them cannot also find the
    // new client's deadline passed on a machine slow to run it.
    std::thread::sleep(Duration::from_millis(300));
    let mut new = Client::new(server.local_addr());
    let sent = Instant::now();
    new.send(GET_PLAINTEXT);
    let r = new.response();
    let took = sent.elapsed();
    println!("the new client answered after {took:?}");
    assert_eq!(r.body, HELLO);
    assert!(
        took < Duration::from_millis(4500),
        "the new client was answered after {took:?} (header timeout {header_timeout:?}): {:?}",
        server.stats()
    );
    // Every holder was cut (a 408 where a block was at hand, else a close) within the bound,
    // counted from its own head.
    let bound = Duration::from_millis(4500);
    for (i, (c, began)) in holders.iter_mut().enumerate() {
        let got = until_cut(c, *began + bound)
            .unwrap_or_else(|| panic!("holder {i} still open {bound:?} after its head"));
        assert!(
            got.is_empty() || got.starts_with(b"HTTP/1.1 408 "),
            "holder {i} got {:?}",
            String::from_utf8_lossy(&got)
        );
    }
    wait_until("every holder counted as timed out", || {
        server.stats().header_timeouts == HOLDERS as u64
    });
    drop(holders);
    let s = server.stop().unwrap().stats;
    assert_eq!(s.pool.rented_blocks, 0, "{s:?}");
}
}

driver_test! {
/// A connection waiting for a block is woken when blocks come back, not retried on a timer or
/// every turn: once the holders complete their heads, everyone is answered, at the cost of a
/// few waits per waiting connection.
fn pool_waiters_wake_when_blocks_come_back() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Long enough that no deadline ends the wait: the blocks must come back from answers.
    let server = start(starved_config(Duration::from_secs(20)));
    let mut holders = hold_the_pool(&server);
    let during = server.stats();
    let waiters = waiting(&during);
    // A second of exhaustion: a retry timer would show here.
    std::thread::sleep(Duration::from_secs(1));
    for (c, _) in &mut holders {
        c.send(b"\r\n");
    }
    for (i, (c, _)) in holders.iter_mut().enumerate() {
        let r = c.response();
        assert_eq!((r.status, &r.body[..]), (200, HELLO), "holder {i}");
    }
    let s = server.stats();
    println!("{} pool waits for {waiters} waiting connections", s.pool_waits);
    assert!(waiters > 0, "no connection waited for the pool: {during:?}");
    assert!(
        s.pool_waits < 5 * waiters,
        "{} pool waits for {waiters} waiting connections: {s:?}",
        s.pool_waits
    );
    drop(holders);
    let s = server.stop().unwrap().stats;
    assert_eq!(s.pool.rented_blocks, 0, "{s:?}");
}
}
