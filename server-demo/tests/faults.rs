//! Faults and load: timeouts, max-conns, pool exhaustion and recovery, graceful shutdown,
//! 64 concurrent clients, and idle connections holding no blocks (churn is in `churn.rs`).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::*;
use server_demo::PoolConfig;

driver_test! {
fn header_timeout_answers_408_and_closes() {
    let mut cfg = config();
    cfg.header_timeout = Duration::from_millis(150);
    let server = start(cfg);
    let mut c = Client::new(server.local_addr());
    // Slowloris: a head that never completes, trickled so the idle timer would not fire.
    c.send(b"GET /plaintext HTTP/1.1\r\n");
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(50));
        if c.stream.write_all(b"X-A: b\r\n").is_err() {
            break;
        }
    }
    let r = c.response();
    assert_eq!(r.status, 408);
    assert!(r.closes());
    c.expect_closed();
    assert_eq!(server.stats().header_timeouts, 1);
}
}

driver_test! {
fn idle_timeout_closes_quiet_connections() {
    let mut cfg = config();
    cfg.idle_timeout = Duration::from_millis(150);
    let server = start(cfg);
    // After a request.
    let mut c = Client::new(server.local_addr());
    assert_eq!(c.request(GET_PLAINTEXT).status, 200);
    c.expect_closed();
    wait_until("idle connections closed", || {
        server.stats().connections_open == 0
    });
    assert!(server.stats().idle_timeouts >= 1);
    assert_eq!(server.stats().pool.rented_blocks, 0);
}
}

driver_test! {
fn a_connection_that_sends_nothing_is_cut_at_the_header_timeout() {
    // A connection's first byte is under the header deadline, not the idle one: slowloris
    // connections that never speak hold their slots no longer than those that send a byte.
    let mut cfg = config();
    cfg.header_timeout = Duration::from_millis(150);
    cfg.idle_timeout = Duration::from_secs(60);
    let server = start(cfg);
    let mut quiet = Client::new(server.local_addr());
    // Closed without a word: there is no request to answer with a 408.
    quiet.expect_closed();
    wait_until("the quiet connection closed", || {
        server.stats().connections_open == 0
    });
    let stats = server.stats();
    assert_eq!(stats.header_timeouts, 1);
    assert_eq!(stats.idle_timeouts, 0);
    // A connection that was served goes back under the idle deadline.
    let mut c = Client::new(server.local_addr());
    assert_eq!(c.request(GET_PLAINTEXT).status, 200);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(c.request(GET_PLAINTEXT).status, 200);
    assert_eq!(server.stats().header_timeouts, 1);
}
}

driver_test! {
fn max_conns_closes_the_excess_at_once() {
    let mut cfg = config();
    cfg.workers = 1;
    cfg.max_conns = 4;
    let server = start(cfg);
    let addr = server.local_addr();
    let mut held: Vec<Client> = (0..4).map(|_| Client::new(addr)).collect();
    for c in &mut held {
        assert_eq!(c.request(GET_PLAINTEXT).status, 200);
    }
    let mut extra = Client::new(addr);
    extra.expect_closed();
    assert_eq!(server.stats().connections_rejected, 1);
    // The held ones are unaffected, and a freed slot is usable again.
    assert_eq!(held[0].request(GET_JSON).body, HELLO_JSON);
    drop(held.pop());
    wait_until("slot freed", || server.stats().connections_open == 3);
    let mut again = Client::new(addr);
    assert_eq!(again.request(GET_PLAINTEXT).body, HELLO);
}
}

driver_test! {
fn pool_exhaustion_waits_and_recovers() {
    let mut cfg = config();
    cfg.workers = 1;
    // Four 4 KiB blocks in all; the large class can never get a slab under this bound.
    cfg.pool = PoolConfig {
        blocks_per_slab: 4,
        prealloc_slabs: 1,
        max_bytes: 4 * 4096,
        local_capacity: 2,
        ..PoolConfig::default()
    };
    let server = start(cfg);
    let addr = server.local_addr();
    // Four partial heads hold the four blocks.
    let mut hogs: Vec<Client> = (0..4).map(|_| Client::new(addr)).collect();
    for h in &mut hogs {
        h.send(b"GET /plaintext HTTP/1.1\r\nHost: t\r\n");
    }
    wait_until("hogs hold every block", || {
        server.stats().pool.rented_blocks == 4
    });
    // This one must wait, not fail, not crash.
    let mut waiting = Client::new(addr);
    waiting.send(GET_PLAINTEXT);
    wait_until("a pool wait", || server.stats().pool_waits > 0);
    waiting
        .stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut b = [0u8; 1];
    assert!(
        waiting.stream.read(&mut b).is_err(),
        "served without a block?"
    );
    waiting.stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    // One hog finishes its request: its blocks return, the waiter proceeds.
    hogs[0].send(b"\r\n");
    assert_eq!(hogs[0].response().body, HELLO);
    assert_eq!(waiting.response().body, HELLO);
    drop(hogs);
    wait_until("everything returned", || {
        let s = server.stats();
        s.connections_open == 1 && s.pool.rented_blocks == 0
    });
    assert!(
        server.stats().pool.allocated_bytes <= 4 * 4096,
        "pool grew past its bound"
    );
    assert_eq!(waiting.request(GET_JSON).body, HELLO_JSON);
}
}

driver_test! {
fn graceful_shutdown_finishes_in_flight_and_stops_accepting() {
    let server = start(config());
    let addr = server.local_addr();
    let mut idle = Client::new(addr);
    assert_eq!(idle.request(GET_PLAINTEXT).status, 200);
    let mut busy = Client::new(addr);
    busy.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nhello");
    wait_until("both requests seen", || server.stats().requests == 2);
    server.shutdown();
    idle.expect_closed();
    // The exchange in flight completes after shutdown began...
    busy.send(b"world");
    let r = busy.response();
    assert_eq!((r.status, &r.body[..]), (200, &b"helloworld"[..]));
    // ...and then the connection closes.
    busy.expect_closed();
    let summary = server.join().expect("clean exit");
    assert_eq!(summary.stats.requests, 2);
    assert_eq!(summary.stats.connections_open, 0);
    assert_eq!(summary.stats.pool.rented_blocks, 0);
    assert!(
        TcpStream::connect(addr).is_err(),
        "still accepting after shutdown"
    );
}
}

driver_test! {
fn sixty_four_concurrent_clients() {
    let server = start(config());
    let addr = server.local_addr();
    let threads: Vec<_> = (0..64)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = Client::new(addr);
                for j in 0..25 {
                    if (i + j) % 3 == 0 {
                        let body = format!("client {i} request {j}");
                        let req = format!(
                            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        assert_eq!(c.request(req.as_bytes()).body, body.as_bytes());
                    } else {
                        assert_eq!(c.request(GET_PLAINTEXT).body, HELLO);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = server.stats();
    assert_eq!(s.requests, 64 * 25);
    assert_eq!(s.connections_accepted, 64);
}
}

driver_test! {
fn accept_one_mode_serves_everyone() {
    let mut cfg = config();
    cfg.workers = 1;
    cfg.accept_batch = 1;
    let server = start(cfg);
    let addr = server.local_addr();
    let threads: Vec<_> = (0..32)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::new(addr);
                for _ in 0..5 {
                    assert_eq!(c.request(GET_JSON).body, HELLO_JSON);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(server.stats().requests, 32 * 5);
}
}

driver_test! {
fn idle_keep_alive_connections_hold_no_blocks() {
    let mut cfg = config();
    cfg.max_conns = 1000;
    let server = start(cfg);
    let addr = server.local_addr();
    let clients: Vec<Client> = (0..500)
        .map(|_| {
            let mut c = Client::new(addr);
            assert_eq!(c.request(GET_PLAINTEXT).body, HELLO);
            c
        })
        .collect();
    wait_until("all idle, no block rented", || {
        let s = server.stats();
        s.connections_open == 500 && s.pool.rented_blocks == 0
    });
    drop(clients);
}
}
