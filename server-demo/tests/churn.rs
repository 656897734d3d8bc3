//! Connection churn: resets, garbage, half-closes and abandoned pipelines from many threads,
//! then no block may stay rented and the process may not grow. Alone in its file because it
//! reads the process's RSS, which tests running beside it in the same process would disturb.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;

/// One client's worth of churn: mostly good exchanges, some resets, half-closes and garbage.
fn churn_round(addr: SocketAddr, threads: usize, per_thread: usize) {
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let mut c = Client::new(addr);
                    match (t + i) % 6 {
                        // Reset mid-request (RST via SO_LINGER 0).
                        0 => {
                            c.send(
                                b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc",
                            );
                            socket2::SockRef::from(&c.stream)
                                .set_linger(Some(Duration::ZERO))
                                .unwrap();
                        }
                        // Garbage: 400 and close.
                        1 => {
                            c.send(b"\x00\x01garbage\r\n\r\n");
                            assert_eq!(c.response().status, 400);
                        }
                        // Pipelined, then gone without reading.
                        2 => c.send(&GET_JSON.repeat(8)),
                        // Half-close after the request.
                        3 => {
                            c.send(GET_PLAINTEXT);
                            c.stream.shutdown(std::net::Shutdown::Write).unwrap();
                            assert_eq!(c.response().body, HELLO);
                        }
                        // Good keep-alive exchanges.
                        _ => {
                            for _ in 0..3 {
                                assert_eq!(c.request(GET_PLAINTEXT).body, HELLO);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn churn_leaves_no_block_rented_and_rss_flat() {
    each_driver("churn_leaves_no_block_rented_and_rss_flat", || {
        let mut cfg = config();
        cfg.idle_timeout = Duration::from_secs(2);
        let server = start(cfg);
        let addr = server.local_addr();
        let mut rss = Vec::new();
        for round in 0..4 {
            churn_round(addr, 8, 150);
            // Every connection accepted (a reset one may still sit in the backlog when its
            // client thread is done), then all closed and every block back.
            wait_until("all churned connections accepted and closed", || {
                let s = server.stats();
                s.connections_accepted == 1200 * (round + 1)
                    && s.connections_open == 0
                    && s.pool.rented_blocks == 0
            });
            rss.push(rss_kib());
        }
        let s = server.stats();
        assert_eq!(s.pool.rented_blocks, 0);
        assert!(s.io_errors > 0, "resets were seen: {s:?}");
        // Round 1 warms everything up; later rounds must not grow the process.
        let growth = rss[3].saturating_sub(rss[1]);
        assert!(
            growth < 4096,
            "RSS grew by {growth} KiB across rounds: {rss:?}"
        );
        eprintln!("churn: 4800 connections, RSS after each round (KiB): {rss:?}; {s:?}");
    });
}
