//! Out of file descriptors: accept fails with EMFILE; the worker must back off (not spin, not
//! die) and accept the waiting connection once descriptors are free again. Its own test binary,
//! because it exhausts the whole process's descriptor table.

mod common;

use std::fs::File;
use std::time::Duration;

use common::*;

/// Lowers this process's soft descriptor limit to at most 4096, so the table is exhausted
/// quickly whatever the machine's default; returns the limit now in force.
fn cap_fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` only writes the `rlimit` it is given, which lives on this stack.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) }, 0);
    r.rlim_cur = r.rlim_cur.min(4096);
    // SAFETY: `setrlimit` only reads the `rlimit` it is given; lowering the soft limit is
    // always allowed.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) }, 0);
    r.rlim_cur
}

#[test]
fn emfile_on_accept_backs_off_and_recovers() {
    each_driver("emfile_on_accept_backs_off_and_recovers", || {
        let mut cfg = config();
        cfg.workers = 1;
        let server = start(cfg);
        // After the start, which raises the soft limit to the hard one.
        let limit = cap_fd_limit();
        let addr = server.local_addr();
        let mut warm = Client::new(addr);
        assert_eq!(warm.request(GET_PLAINTEXT).body, HELLO);

        // A socket made while descriptors remain; it connects after the table is full, so the
        // server's accept is the call that fails.
        let late =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let mut hog = Vec::new();
        loop {
            match File::open("/dev/null") {
                Ok(f) => hog.push(f),
                Err(e) if e.raw_os_error() == Some(24) => break,
                Err(e) => panic!("unexpected: {e}"),
            }
            assert!(hog.len() as u64 <= limit, "never ran out of descriptors");
        }
        late.connect(&addr.into()).unwrap();
        wait_until("an accept back-off", || server.stats().accept_backoffs > 0);
        // Backing off, not spinning: a handful of retries per second at most.
        std::thread::sleep(Duration::from_millis(300));
        let backoffs = server.stats().accept_backoffs;
        assert!(backoffs <= 10, "{backoffs} back-offs in ~300 ms: spinning?");
        // The established connection is still served meanwhile.
        assert_eq!(warm.request(GET_JSON).body, HELLO_JSON);
        // Descriptors come back: the waiting connection is accepted and served.
        drop(hog);
        let mut late = Client::from_stream(late.into());
        assert_eq!(late.request(GET_PLAINTEXT).body, HELLO);
        assert!(server.stats().accept_backoffs >= 1);
    });
}
