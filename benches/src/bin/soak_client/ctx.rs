//! What the scenarios share: the arguments, the connection gate, the tally, `/stats`.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::args::Args;
use crate::peer::{Fail, Peer, Response};
use crate::request::Request;
use crate::tally::Book;

/// A `/stats` snapshot, the fields the checks use.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub connections_open: u64,
    pub connections_rejected: u64,
    pub pool_waits: u64,
    pub rented_blocks: u64,
    pub requests: u64,
    pub header_timeouts: u64,
    pub pool_allocated: u64,
    /// TLS handshakes in progress and failed, and the times accepting waited at the handshake
    /// bound.
    pub tls_handshakes: u64,
    pub tls_handshake_failures: u64,
    pub tls_accept_holds: u64,
    /// `KeyUpdate`s the server sent (asked for by the client, or at its record limit).
    pub tls_key_updates: u64,
    /// The I/O driver, where `/stats` names it (`epoll`, `uring`).
    pub driver: Option<&'static str>,
}

#[derive(Default)]
pub struct Bursts {
    pub pool: u64,
    pub pool_exhausted: u64,
    pub pool_waits: u64,
    pub slot: u64,
    pub slot_served: u64,
    pub slot_refused: u64,
    pub slot_refused_server: u64,
}

pub struct Ctx {
    pub args: Args,
    /// New connections take it shared while connecting; a burst over the connection slots
    /// takes it whole, so only the burst's connections are refused.
    pub gate: RwLock<()>,
    pub book: Book,
    pub bursts: Mutex<Bursts>,
    /// `/stats` connections the server refused (during a slot burst).
    pub stats_refused: AtomicU64,
    /// TLS `KeyUpdate`s the client sent (each asking for the server's), and those it could not
    /// send. A connection that fails after one fails its next exchange, a valid one.
    pub key_updates: AtomicU64,
    pub key_update_failures: AtomicU64,
}

impl Ctx {
    /// A new connection for a scenario; a failed connect counts as a missing answer.
    pub fn open(&self, sc: &'static str) -> Option<Peer> {
        self.open_with(sc, None)
    }

    pub fn open_with(&self, sc: &'static str, rcvbuf: Option<usize>) -> Option<Peer> {
        let peer = {
            let _g = self.gate.read().unwrap_or_else(PoisonError::into_inner);
            Peer::connect_with(self.args.addr, rcvbuf)
        };
        match peer {
            Ok(p) => Some(p),
            Err(e) => {
                self.book.fail(sc, &Fail::Io(format!("connect: {e}")), "");
                thread::sleep(Duration::from_millis(100));
                None
            }
        }
    }

    /// Sends a valid request and checks its answer; false when the connection is done.
    pub fn exchange(&self, sc: &'static str, peer: &mut Peer, req: &Request) -> bool {
        let r = if req.continue_100 {
            self.continued(peer, req)
        } else {
            peer.send_read(&req.head, &req.body, req.head_only)
        };
        let r = r.and_then(|r| req.check(&r).map(|()| r).map_err(Fail::Wrong));
        let r = r.and_then(|_| {
            if req.close {
                peer.expect_close()
            } else {
                Ok(())
            }
        });
        match r {
            Ok(()) => {
                self.book.right(sc);
                !req.close
            }
            Err(f) => {
                let head =
                    String::from_utf8_lossy(&req.head[..req.head.len().min(60)]).into_owned();
                self.book.fail(
                    sc,
                    &f,
                    &format!("for {head:?}, body {} bytes", req.body.len()),
                );
                false
            }
        }
    }

    /// `Expect: 100-continue`: the head, the `100 Continue`, then the body and the answer.
    fn continued(&self, peer: &mut Peer, req: &Request) -> Result<Response, Fail> {
        peer.s.write_all(&req.head).map_err(|e| peer.io_fail(&e))?;
        let head = peer.head()?;
        if head.status == 100 {
            return peer.send_read(&[], &req.body, req.head_only);
        }
        // With no body to wait for, the final answer may come at once (RFC 9110 §10.1.1).
        if req.body.is_empty() && head.status >= 200 {
            let body = peer.body(&head, req.head_only)?;
            return Ok(Response { head, body });
        }
        Err(Fail::Wrong(format!(
            "status {} instead of 100 Continue",
            head.status
        )))
    }

    /// `/stats` on a connection of its own (retried if a full server refuses it).
    pub fn stats(&self) -> Result<Stats, String> {
        let mut last = String::new();
        for _ in 0..50 {
            match self.stats_once() {
                Ok(s) => return Ok(s),
                Err((refused, e)) => {
                    if refused {
                        self.stats_refused.fetch_add(1, Relaxed);
                    }
                    last = e;
                    thread::sleep(Duration::from_millis(100));
                }
            }
        }
        Err(format!("GET /stats failed: {last}"))
    }

    fn stats_once(&self) -> Result<Stats, (bool, String)> {
        let mut p = Peer::connect(self.args.addr)
            .map_err(|e| (crate::stream::closed_at_once(&e), e.to_string()))?;
        let r = p
            .send_read(
                b"GET /stats HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n",
                &[],
                false,
            )
            .map_err(|f| (f.nothing_came(), f.to_string()))?;
        if r.head.status != 200 {
            return Err((false, format!("/stats answered {}", r.head.status)));
        }
        let v: serde_json::Value =
            serde_json::from_slice(&r.body).map_err(|e| (false, e.to_string()))?;
        let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
        let pool = |k: &str| {
            v.get("pool")
                .and_then(|p| p.get(k))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        Ok(Stats {
            connections_open: n("connections_open"),
            connections_rejected: n("connections_rejected"),
            pool_waits: n("pool_waits"),
            requests: n("requests"),
            header_timeouts: n("header_timeouts"),
            rented_blocks: pool("rented_blocks"),
            pool_allocated: pool("allocated_bytes"),
            tls_handshakes: n("tls_handshakes"),
            tls_handshake_failures: n("tls_handshake_failures"),
            tls_accept_holds: n("tls_accept_holds"),
            tls_key_updates: n("tls_key_updates"),
            driver: match v.get("driver").and_then(serde_json::Value::as_str) {
                Some("epoll") => Some("epoll"),
                Some("uring") => Some("uring"),
                Some(_) => Some("another"),
                None => None,
            },
        })
    }

    /// Waits until the server holds no connection but the `/stats` one asking, and no more
    /// blocks than `rented_idle`; returns the last snapshot and whether it got there.
    pub fn quiesce(&self, rented_idle: u64) -> Result<(Stats, bool), String> {
        let a = &self.args;
        let limit = Instant::now() + a.idle_timeout.max(a.header_timeout) + Duration::from_secs(10);
        loop {
            let s = self.stats()?;
            if s.connections_open <= 1 && s.rented_blocks <= rented_idle {
                return Ok((s, true));
            }
            if Instant::now() >= limit {
                return Ok((s, false));
            }
            thread::sleep(Duration::from_millis(100));
        }
    }
}
