//! The two drivers side by side (`--io epoll` and `--io uring`): the same exchanges give the
//! same answers, a buffer ring far smaller than the connection count drops nothing, a
//! graceful shutdown with requests in flight leaves no block rented, and where io_uring is
//! refused (here: a seccomp filter on the binary) `--io uring` exits with status 2 and the
//! reason while `--io auto` falls back to epoll. The io_uring runs print `skipped: <reason>`
//! where the kernel refuses io_uring (see `common::uring_refused`).

mod common;

use std::io::{BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use server_demo::{Config, IoMode, PoolConfig};

/// The drivers to run here: epoll always, io_uring where it works.
fn drivers(test: &str) -> Vec<IoMode> {
    let mut modes = vec![IoMode::Epoll];
    match uring_refused() {
        None => modes.push(IoMode::Uring),
        Some(why) => skip_uring(test, &why),
    }
    modes
}

#[test]
fn both_drivers_answer_keep_alive_pipelining_and_echo_alike() {
    for io in drivers("both_drivers_answer_keep_alive_pipelining_and_echo_alike") {
        let server = start(Config { io, ..config() });
        assert_eq!(server.stats().driver, io.name());
        let mut c = Client::new(server.local_addr());
        for _ in 0..3 {
            assert_eq!(c.request(GET_PLAINTEXT).body, HELLO, "{io:?}");
        }
        // 16 pipelined requests in one write: 16 answers, in order.
        let mut batch = Vec::new();
        for i in 0..16 {
            batch.extend_from_slice(if i % 2 == 0 { GET_PLAINTEXT } else { GET_JSON });
        }
        c.send(&batch);
        for i in 0..16 {
            let want = if i % 2 == 0 { HELLO } else { HELLO_JSON };
            assert_eq!(c.response().body, want, "{io:?}: pipelined {i}");
        }
        // Content-Length and chunked echo, larger than a block and a buffer ring entry.
        let body = payload(100_000);
        let mut req = format!(
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(&body);
        let mut w = c.stream.try_clone().unwrap();
        let writer = std::thread::spawn(move || w.write_all(&req).unwrap());
        let r = c.response();
        writer.join().unwrap();
        assert!(r.status == 200 && r.body == body, "{io:?}: echo differs");
        let r = c.request(
            b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        );
        assert_eq!((r.status, &r.body[..]), (200, &b"hello"[..]), "{io:?}");
        // A request head that arrives a byte at a time.
        for &b in GET_PLAINTEXT {
            c.send(&[b]);
        }
        assert_eq!(c.response().body, HELLO, "{io:?}: byte-wise head");
        drop(c);
        wait_until("the connection closed", || {
            let s = server.stats();
            s.connections_open == 0 && s.pool.rented_blocks == 0
        });
        let summary = server.stop().unwrap();
        assert_eq!(summary.stats.pool.rented_blocks, 0, "{io:?}");
    }
}

/// An 8-entry buffer ring (a 128 KiB pool: 32 blocks, one worker) and 512 connections sending
/// at once: every request is answered, no connection is dropped.
#[test]
fn a_ring_far_smaller_than_the_connection_count_drops_nothing() {
    for io in drivers("a_ring_far_smaller_than_the_connection_count_drops_nothing") {
        let server = start(Config {
            io,
            workers: 1,
            max_conns: 600,
            pool: PoolConfig {
                blocks_per_slab: 32,
                prealloc_slabs: 1,
                max_bytes: 128 << 10,
                local_capacity: 8,
                ..PoolConfig::default()
            },
            ..config()
        });
        let addr = server.local_addr();
        let mut clients: Vec<Client> = (0..512).map(|_| Client::new(addr)).collect();
        wait_until("512 connections accepted", || {
            server.stats().connections_accepted == 512
        });
        for c in &mut clients {
            c.send(GET_PLAINTEXT);
        }
        for (i, c) in clients.iter_mut().enumerate() {
            assert_eq!(c.response().body, HELLO, "{io:?}: connection {i}");
        }
        // And again, on the same connections: none was dropped.
        for c in &mut clients {
            c.send(GET_JSON);
        }
        for (i, c) in clients.iter_mut().enumerate() {
            assert_eq!(c.response().body, HELLO_JSON, "{io:?}: connection {i}");
        }
        let s = server.stats();
        assert_eq!(s.connections_open, 512, "{io:?}: {s:?}");
        assert!(
            s.pool.allocated_bytes <= 128 << 10,
            "{io:?}: pool grew past its bound"
        );
        drop(clients);
        let summary = server.stop().unwrap();
        assert_eq!(summary.stats.requests, 1024, "{io:?}");
        assert_eq!(summary.stats.pool.rented_blocks, 0, "{io:?}");
    }
}

/// Shutdown with receives parked in the kernel (idle connections), a partial head and a
/// response the client is slow to read: the workers finish, and no block stays out of the
/// pool (the buffer ring's blocks included).
#[test]
fn graceful_shutdown_with_operations_in_flight_leaves_no_block_rented() {
    for io in drivers("graceful_shutdown_with_operations_in_flight_leaves_no_block_rented") {
        let server = start(Config {
            io,
            shutdown_grace: Duration::from_millis(300),
            ..config()
        });
        let addr = server.local_addr();
        let mut idle: Vec<Client> = (0..20).map(|_| Client::new(addr)).collect();
        for c in &mut idle {
            assert_eq!(c.request(GET_PLAINTEXT).body, HELLO);
        }
        let mut partial = Client::new(addr);
        partial.send(b"GET /plaintext HTTP/1.1\r\nHost");
        let mut big = Client::new(addr);
        big.send(b"GET /json HTTP/1.1\r\nHost: t\r\n\r\n");
        wait_until("22 connections open", || {
            server.stats().connections_open == 22
        });
        let summary = server.stop().unwrap();
        assert_eq!(summary.stats.connections_open, 0, "{io:?}");
        assert_eq!(
            summary.stats.pool.rented_blocks, 0,
            "{io:?}: {:?}",
            summary.stats
        );
        assert_eq!(summary.stats.pool.rented_bytes, 0, "{io:?}");
        drop((idle, partial, big));
    }
}

/// Installs a seccomp filter that makes `io_uring_setup` fail with `EPERM`, as a container's
/// default profile does.
#[cfg(target_arch = "x86_64")]
fn deny_io_uring() -> std::io::Result<()> {
    const IO_URING_SETUP: u32 = 425;
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let filter = [
        // Load the syscall number (offset 0 of `struct seccomp_data`).
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        // io_uring_setup: fall through to EPERM; anything else: skip to ALLOW.
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: IO_URING_SETUP,
        },
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: plain prctl calls; `prog` and `filter` outlive them (the kernel copies the
    // program).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The binary with io_uring refused by seccomp, on port 0.
#[cfg(target_arch = "x86_64")]
fn spawn_refused(io: &str) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_server-demo"));
    cmd.args(["--addr", "127.0.0.1:0", "--workers", "1", "--io", io])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the hook only makes two prctl calls, which are async-signal-safe.
    unsafe { cmd.pre_exec(deny_io_uring) };
    cmd.spawn()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_refused_io_uring_exits_2_for_uring_and_falls_back_to_epoll_for_auto() {
    let test = "a_refused_io_uring_exits_2_for_uring_and_falls_back_to_epoll_for_auto";
    // `--io uring`: status 2, and the reason.
    let child = match spawn_refused("uring") {
        Ok(c) => c,
        Err(e) => {
            println!("skipped: {test}: cannot install a seccomp filter here: {e}");
            return;
        }
    };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("seccomp filter") && out.status.code() != Some(2) {
        println!("skipped: {test}: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    // The reason: the filter's EPERM, or the sysctl where it already turns io_uring off.
    assert!(
        stderr.contains("--io uring")
            && (stderr.contains("EPERM") || stderr.contains("io_uring_disabled")),
        "{stderr}"
    );

    // `--io auto`: one line on stderr, then it serves with epoll.
    let mut child = spawn_refused("auto").unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let addr = listening_addr(&mut stdout);
    let mut c = Client::new(addr);
    let r = c.request(b"GET /stats HTTP/1.1\r\nHost: t\r\n\r\n");
    let stats = String::from_utf8_lossy(&r.body).into_owned();
    assert!(stats.contains(r#""driver":"epoll""#), "{stats}");
    assert_eq!(c.request(GET_PLAINTEXT).body, HELLO);
    drop(c);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{stderr}");
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("io_uring unavailable"))
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("using epoll"), "{stderr}");
}

/// A client that pipelines faster than it reads: 4 000 requests written in one go while it
/// reads nothing for a while. The server's sends stall, so input arrives faster than the
/// connection takes it: epoll stops reading; io_uring parks what the kernel already received
/// and cancels the receive until the connection has taken it. Either way every request is
/// answered, in order, and no block stays rented.
#[test]
fn input_faster_than_the_connection_takes_it_is_held_back_not_lost() {
    const N: usize = 4_000;
    for io in drivers("input_faster_than_the_connection_takes_it_is_held_back_not_lost") {
        let server = start(Config { io, ..config() });
        let mut c = Client::new(server.local_addr());
        let mut batch = Vec::with_capacity(N * GET_PLAINTEXT.len());
        for i in 0..N {
            batch.extend_from_slice(if i % 3 == 0 { GET_JSON } else { GET_PLAINTEXT });
        }
        let mut w = c.stream.try_clone().unwrap();
        let writer = std::thread::spawn(move || w.write_all(&batch).unwrap());
        // Let the responses back up in the sockets before reading any.
        std::thread::sleep(Duration::from_millis(300));
        for i in 0..N {
            let want = if i % 3 == 0 { HELLO_JSON } else { HELLO };
            assert_eq!(c.response().body, want, "{io:?}: response {i}");
        }
        writer.join().unwrap();
        let s = server.stats();
        assert_eq!(s.requests, N as u64, "{io:?}");
        if io == IoMode::Uring {
            assert!(s.receive_pauses > 0, "the receive was never paused: {s:?}");
        } else {
            assert_eq!(s.receive_pauses, 0, "{s:?}");
        }
        drop(c);
        let summary = server.stop().unwrap();
        assert_eq!(summary.stats.pool.rented_blocks, 0, "{io:?}");
    }
}

/// A last response goes out whole before the close, under both drivers: where the client asked
/// to close and sent nothing more, the close follows the send at once (under io_uring, queued
/// with it); where it sent more, the close lingers. A slow reader gets all of it either way.
#[test]
fn a_last_response_goes_out_whole_before_the_close() {
    for io in drivers("a_last_response_goes_out_whole_before_the_close") {
        let server = start(Config { io, ..config() });
        let addr = server.local_addr();
        // HTTP/1.0 without keep-alive, and HTTP/1.1 with `Connection: close`.
        for req in [
            &b"GET /json HTTP/1.0\r\n\r\n"[..],
            b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        ] {
            let mut c = Client::new(addr);
            let r = c.request(req);
            assert!(r.status == 200 && r.closes(), "{io:?}: {r:?}");
            c.expect_closed();
        }
        // An echo larger than the socket buffers, to a client that reads only after a while.
        let body = payload(3 << 20);
        let mut req = format!(
            "POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(&body);
        let mut c = Client::new(addr);
        let mut w = c.stream.try_clone().unwrap();
        let writer = std::thread::spawn(move || w.write_all(&req).unwrap());
        std::thread::sleep(Duration::from_millis(200));
        let r = c.response();
        writer.join().unwrap();
        assert!(r.status == 200 && r.body == body, "{io:?}: echo differs");
        c.expect_closed();
        // Bytes after the last request: answered, then closed (lingering), never served.
        let mut c = Client::new(addr);
        c.send(b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /json HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(c.response().body, HELLO, "{io:?}");
        c.expect_closed();
        drop(c);
        wait_until("every connection closed", || {
            let s = server.stats();
            s.connections_open == 0 && s.pool.rented_blocks == 0
        });
        let summary = server.stop().unwrap();
        assert_eq!(summary.stats.io_errors, 0, "{io:?}");
        assert_eq!(summary.stats.pool.rented_blocks, 0, "{io:?}");
    }
}
