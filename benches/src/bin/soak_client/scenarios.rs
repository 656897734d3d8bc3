//! The scenarios. Each runs until `until`, starting nothing it cannot finish by then (give or
//! take one exchange).

use std::fmt::Write as _;
use std::io::Write;
use std::net::Shutdown;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::PoisonError;
use std::thread;
use std::time::{Duration, Instant};

use crate::ctx::Ctx;
use crate::peer::{Fail, Peer, IO_TIMEOUT};
use crate::request::{Expect, Request, SliceWriter};
use crate::rng::Rng;
use crate::stream::closed_at_once;
use crate::tally::Kind;

pub const KEEP_ALIVE: &str = "keep-alive (GET, HEAD, 404, 405, echo CL, 100-continue)";
pub const PIPELINED: &str = "pipelined 16 deep";
pub const CHUNKED: &str = "echo chunked";
pub const CHURN: &str = "churn (new connection per request)";
pub const SLOW_OK: &str = "slow head within the header timeout";
pub const SLOW_BODY: &str = "slow body within the idle timeout";
pub const SLOW_408: &str = "slow head past the header timeout (408)";
pub const RESET: &str = "reset mid-head / mid-body / mid-response";
pub const GONE: &str = "gone before the answer (FIN)";
pub const HEAD_431: &str = "head over --max-head (431)";
pub const BODY_413: &str = "body over --max-body (413)";
pub const POOL_BURST: &str = "burst exhausting the pool";
pub const SLOT_BURST: &str = "burst over the connection slots";

pub fn kind_of(sc: &str) -> Kind {
    match sc {
        SLOW_408 | HEAD_431 | BODY_413 => Kind::Refusal,
        RESET | GONE => Kind::Abort,
        _ => Kind::Valid,
    }
}

/// Opens connections one after another until `until`; on each, runs `step` a random 1 to `most`
/// times, as long as it returns true (the connection is still good).
fn one_after_another(
    ctx: &Ctx,
    sc: &'static str,
    rng: &mut Rng,
    until: Instant,
    most: usize,
    mut step: impl FnMut(&mut Peer, &mut Rng) -> bool,
) {
    let every = ctx.args.key_update_every;
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(sc) else {
            continue;
        };
        for i in 0..rng.range(1, most) {
            if Instant::now() >= until {
                break;
            }
            // With TLS, a KeyUpdate now and then: the exchanges after it must go on as before.
            if every > 0 && i > 0 && i % every == 0 {
                match peer.s.key_update() {
                    Ok(true) => {
                        ctx.key_updates.fetch_add(1, Relaxed);
                    }
                    Ok(false) => {}
                    Err(e) => {
                        ctx.key_update_failures.fetch_add(1, Relaxed);
                        ctx.book.fail(sc, &peer.io_fail(&e), "sending a KeyUpdate");
                        break;
                    }
                }
            }
            if !step(&mut peer, rng) {
                break;
            }
        }
    }
}

fn keep_alive(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    one_after_another(ctx, KEEP_ALIVE, rng, until, 200, |peer, rng| {
        let req = if rng.percent(40) {
            let n = rng.body_len(ctx.args.max_body);
            Request::echo(rng.bytes(n), rng.percent(10))
        } else if rng.percent(3) {
            Request::large_head(rng, ctx.args.max_head)
        } else {
            Request::small(rng)
        };
        ctx.exchange(KEEP_ALIVE, peer, &req)
    });
}

fn pipelined(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    one_after_another(ctx, PIPELINED, rng, until, 100, |peer, rng| {
        let batch: Vec<Request> = (0..16).map(|_| Request::small(rng)).collect();
        let mut bytes = Vec::new();
        for r in &batch {
            bytes.extend_from_slice(&r.head);
            bytes.extend_from_slice(&r.body);
        }
        if let Err(e) = peer.s.write_all(&bytes) {
            ctx.book
                .fail(PIPELINED, &peer.io_fail(&e), "writing a batch");
            return false;
        }
        for (i, req) in batch.iter().enumerate() {
            let r = peer
                .response(req.head_only)
                .and_then(|r| req.check(&r).map_err(Fail::Wrong));
            if let Err(f) = r {
                ctx.book.fail(PIPELINED, &f, &format!("response {i} of 16"));
                for _ in i + 1..16 {
                    ctx.book
                        .fail(PIPELINED, &Fail::Eof { got: 0 }, "after a failed one");
                }
                return false;
            }
            ctx.book.right(PIPELINED);
        }
        true
    });
}

fn chunked(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    one_after_another(ctx, CHUNKED, rng, until, 50, |peer, rng| {
        let n = rng.body_len(ctx.args.max_body);
        let data = rng.bytes(n);
        let req = Request::echo_chunked(rng, data);
        ctx.exchange(CHUNKED, peer, &req)
    });
}

fn churn(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(CHURN) else {
            continue;
        };
        match rng.next() % 10 {
            // The client closes after its one answer.
            0..=3 => {
                let req = Request::small(rng);
                ctx.exchange(CHURN, &mut peer, &req);
            }
            4..=6 => {
                let req = Request::small(rng).closing();
                ctx.exchange(CHURN, &mut peer, &req);
            }
            7 | 8 => {
                // HTTP/1.0 without keep-alive: answered in HTTP/1.1 and closed.
                let req = Request {
                    head: b"GET /plaintext HTTP/1.0\r\n\r\n".to_vec(),
                    close: true,
                    ..Request::get("/plaintext", Expect::Plaintext)
                };
                ctx.exchange(CHURN, &mut peer, &req);
            }
            _ => {
                // Sends a request and goes away (FIN) without reading the answer.
                let n = rng.range(0, 64 * 1024);
                let req = Request::echo(rng.bytes(n), false);
                let _ = peer.s.write_all(&req.head);
                let _ = peer.s.write_all(&req.body);
                ctx.book.other(GONE, "requests");
            }
        }
    }
}

/// Heads trickled well within the header timeout, and bodies with pauses well within the idle
/// timeout: both must be served.
fn slow_within(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    let a = &ctx.args;
    while Instant::now() + a.header_timeout.max(a.idle_timeout) < until {
        let Some(mut peer) = ctx.open(SLOW_OK) else {
            continue;
        };
        if rng.percent(50) {
            let req = Request::small(rng);
            let pieces = 6;
            let gap = a.header_timeout / 2 / pieces;
            let step = req.head.len().div_ceil(pieces as usize);
            let mut ok = true;
            for piece in req.head.chunks(step) {
                ok &= peer.s.write_all(piece).is_ok();
                thread::sleep(gap);
            }
            let r = if ok {
                peer.send_read(&[], &req.body, req.head_only)
            } else {
                Err(Fail::Io("write failed while trickling the head".to_owned()))
            };
            match r.and_then(|r| req.check(&r).map_err(Fail::Wrong)) {
                Ok(()) => ctx.book.right(SLOW_OK),
                Err(f) => ctx.book.fail(SLOW_OK, &f, "trickled head"),
            }
            // The connection must be as good as new afterwards.
            ctx.exchange(SLOW_OK, &mut peer, &Request::get("/json", Expect::Json));
        } else {
            let n = rng.range(1, 24 * 1024);
            let req = Request::echo(rng.bytes(n), false);
            let pieces = 5;
            let gap = a.idle_timeout / 4 / pieces;
            let step = n.div_ceil(pieces as usize);
            let mut ok = peer.s.write_all(&req.head).is_ok();
            for piece in req.body.chunks(step) {
                thread::sleep(gap);
                ok &= peer.s.write_all(piece).is_ok();
            }
            let r = if ok {
                peer.response(false)
            } else {
                Err(Fail::Io("write failed while trickling the body".to_owned()))
            };
            match r.and_then(|r| req.check(&r).map_err(Fail::Wrong)) {
                Ok(()) => ctx.book.right(SLOW_BODY),
                Err(f) => ctx
                    .book
                    .fail(SLOW_BODY, &f, &format!("trickled body of {n} bytes")),
            }
        }
    }
}

/// A head trickled one byte per quarter of the header timeout, never finished: the server
/// must answer 408 with `Connection: close` and close.
fn slow_past(ctx: &Ctx, until: Instant) {
    let a = &ctx.args;
    let head = b"GET /plaintext HTTP/1.1\r\nHost: soak\r\nX-Slow: ";
    while Instant::now() + a.header_timeout * 3 < until {
        let Some(mut peer) = ctx.open(SLOW_408) else {
            continue;
        };
        let step = a.header_timeout / 4;
        let _ = peer.s.set_read_timeout(Some(step));
        let give_up = Instant::now() + a.header_timeout * 3;
        let mut sent = 0;
        let answer = loop {
            let byte = head.get(sent).copied().unwrap_or(b'a');
            if peer.s.write_all(&[byte]).is_err() {
                break None;
            }
            sent += 1;
            match peer.fill() {
                Ok(()) => break Some(()),
                Err(Fail::Timeout) if Instant::now() < give_up => {}
                Err(Fail::Timeout) => {
                    break Some(());
                }
                Err(_) => break None,
            }
        };
        let _ = peer.s.set_read_timeout(Some(IO_TIMEOUT));
        let r = match answer {
            // Something came (or nothing for three header timeouts): it must be the 408.
            Some(()) => peer.response(false),
            None => Err(Fail::Eof { got: peer.got }),
        };
        let r = r.and_then(|r| peer.refused(&r, 408));
        match r {
            Ok(()) => ctx.book.right(SLOW_408),
            Err(f) => ctx
                .book
                .fail(SLOW_408, &f, &format!("after {sent} head bytes")),
        }
    }
}

/// Clients that reset (`SO_LINGER` 0) mid-head, mid-body (by length or chunked) or while
/// their answer is on its way.
fn resets(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(RESET) else {
            continue;
        };
        let pause = Duration::from_millis(rng.range(0, 20) as u64);
        match rng.next() % 4 {
            0 => {
                let req = Request::small(rng);
                let cut = rng.range(1, req.head.len() - 1);
                let _ = peer.s.write_all(&req.head[..cut]);
                thread::sleep(pause);
                peer.reset();
                ctx.book.other(RESET, "mid-head");
            }
            1 => {
                let n = rng.range(2, ctx.args.max_body);
                let req = Request::echo(rng.bytes(n), false);
                let cut = rng.range(1, (n - 1).min(48 * 1024));
                let _ = peer.s.write_all(&req.head);
                let _ = peer.s.write_all(&req.body[..cut]);
                thread::sleep(pause);
                peer.reset();
                ctx.book.other(RESET, "mid-body (length)");
            }
            2 => {
                let n = rng.range(2, 256 * 1024);
                let data = rng.bytes(n);
                let req = Request::echo_chunked(rng, data);
                let cut = rng.range(1, (req.body.len() - 6).min(48 * 1024));
                let _ = peer.s.write_all(&req.head);
                let _ = peer.s.write_all(&req.body[..cut]);
                thread::sleep(pause);
                peer.reset();
                ctx.book.other(RESET, "mid-body (chunked)");
            }
            _ => {
                // A large echo: read a little of the answer, then reset.
                let n = rng.range(64 * 1024, ctx.args.max_body);
                let req = Request::echo(rng.bytes(n), false);
                let mut w = match peer.s.try_clone() {
                    Ok(w) => w,
                    Err(_) => continue,
                };
                let want = rng.range(1, 32 * 1024) as u64;
                thread::scope(|sc| {
                    let (head, body) = (&req.head, &req.body);
                    let writer = sc.spawn(move || {
                        let _ = w.write_all(head).and_then(|()| w.write_all(body));
                    });
                    while peer.got < want && peer.fill().is_ok() {}
                    let _ = socket2::SockRef::from(peer.s.tcp()).set_linger(Some(Duration::ZERO));
                    let _ = peer.s.shutdown(Shutdown::Both);
                    let _ = writer.join();
                });
                peer.reset();
                ctx.book.other(RESET, "mid-response");
            }
        }
    }
}

/// Heads over `--max-head` (one long field, or too many fields) must get 431; bodies over
/// `--max-body` 413 (by Content-Length, up front) or, chunked, a 413 if nothing was sent yet,
/// else a cut-short echo (the documented limit: no 413 can follow a 200).
fn oversized(ctx: &Ctx, rng: &mut Rng, until: Instant) {
    let a = &ctx.args;
    while Instant::now() < until {
        let Some(mut peer) = ctx.open(HEAD_431) else {
            continue;
        };
        let (sc, head, body, want) = match rng.next() % 4 {
            0 => {
                let pad = "a".repeat(a.max_head + rng.range(1, 4096));
                let head = format!("GET /plaintext HTTP/1.1\r\nHost: soak\r\nX-Pad: {pad}\r\n\r\n");
                (HEAD_431, head.into_bytes(), Vec::new(), 431)
            }
            1 => {
                let mut head = b"GET /plaintext HTTP/1.1\r\nHost: soak\r\n".to_vec();
                for i in 0..rng.range(101, 140) {
                    let _ = write!(SliceWriter(&mut head), "X-F{i}: {i}\r\n");
                }
                head.extend_from_slice(b"\r\n");
                (HEAD_431, head, Vec::new(), 431)
            }
            2 => {
                let n = a.max_body + rng.range(1, 1 << 20);
                let head =
                    format!("POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Length: {n}\r\n\r\n");
                let sent = rng.range(0, 64 * 1024);
                (BODY_413, head.into_bytes(), rng.bytes(sent), 413)
            }
            _ => {
                over_limit_chunked(ctx, rng, peer);
                continue;
            }
        };
        let r = peer
            .send_read(&head, &body, false)
            .and_then(|r| peer.refused(&r, want));
        match r {
            Ok(()) => ctx.book.right(sc),
            Err(f) => ctx
                .book
                .fail(sc, &f, &format!("head of {} bytes", head.len())),
        }
    }
}

fn over_limit_chunked(ctx: &Ctx, rng: &mut Rng, mut peer: Peer) {
    let n = ctx.args.max_body + rng.range(1, 64 * 1024);
    let data = rng.bytes(n);
    let req = Request::echo_chunked(rng, data);
    let Ok(mut w) = peer.s.try_clone() else {
        return;
    };
    let r = thread::scope(|sc| {
        let (head, body) = (&req.head, &req.body);
        let writer = sc.spawn(move || {
            let _ = w.write_all(head).and_then(|()| w.write_all(body));
        });
        let r = match peer.head() {
            Ok(h) if h.status == 413 && h.closes() => peer.expect_close().map(|()| "413"),
            Ok(h) if h.status == 200 && h.chunked() => {
                let mut got = Vec::new();
                match peer.chunked_body(&mut got) {
                    Err(Fail::Eof { .. } | Fail::Reset { .. }) if got.len() <= n => {
                        Ok("200 cut short")
                    }
                    Ok(()) => Err(Fail::Wrong(format!(
                        "a chunked body of {n} bytes over --max-body was echoed whole ({})",
                        got.len()
                    ))),
                    Err(e) => Err(e),
                }
            }
            Ok(h) => Err(Fail::Wrong(format!(
                "status {} for an over-limit chunked body",
                h.status
            ))),
            Err(e) => Err(e),
        };
        let _ = peer.s.shutdown(Shutdown::Both);
        let _ = writer.join();
        r
    });
    match r {
        Ok(how) => {
            ctx.book.right(BODY_413);
            ctx.book.other(
                BODY_413,
                if how == "413" {
                    "chunked: 413"
                } else {
                    "chunked: cut short"
                },
            );
        }
        Err(f) => ctx
            .book
            .fail(BODY_413, &f, &format!("chunked body of {n} bytes")),
    }
}

/// Enough simultaneous large echoes, none read for a while, to empty the pool: every one must
/// still be answered in full once the clients read.
fn pool_burst(ctx: &Ctx, seed: u64) {
    let a = &ctx.args;
    let before = ctx.stats();
    // Within the header timeout of the held heads, with room to spare.
    let release = Instant::now() + a.header_timeout / 4;
    thread::scope(|sc| {
        for i in 0..a.pool_burst_conns {
            sc.spawn(move || {
                let mut rng = Rng::new(seed ^ ((i as u64 + 1) << 32));
                if i % 4 != 3 {
                    return held_head(ctx, &mut rng, release);
                }
                // The others pipeline hundreds of small requests or send one large echo,
                // whose answers wait in the server's blocks until the client reads.
                let reqs: Vec<Request> = if i % 8 == 7 {
                    let n = rng.range(128 * 1024, (512 * 1024).min(a.max_body));
                    vec![Request::echo(rng.bytes(n), false)]
                } else {
                    (0..rng.range(300, 600))
                        .map(|_| Request::small(&mut rng))
                        .collect()
                };
                let mut bytes = Vec::new();
                for r in &reqs {
                    bytes.extend_from_slice(&r.head);
                    bytes.extend_from_slice(&r.body);
                }
                let Some(mut peer) = ctx.open_with(POOL_BURST, Some(4096)) else {
                    return;
                };
                let Ok(mut w) = peer.s.try_clone() else {
                    return;
                };
                thread::scope(|inner| {
                    let bytes = &bytes;
                    let writer = inner.spawn(move || {
                        let _ = w.write_all(bytes);
                    });
                    thread::sleep(release.saturating_duration_since(Instant::now()));
                    for (k, req) in reqs.iter().enumerate() {
                        let r = peer
                            .response(req.head_only)
                            .and_then(|r| req.check(&r).map_err(Fail::Wrong));
                        if let Err(f) = r {
                            let what = format!("response {k} of {}", reqs.len());
                            ctx.book.fail(POOL_BURST, &f, &what);
                            let _ = peer.s.shutdown(Shutdown::Both);
                            break;
                        }
                        ctx.book.right(POOL_BURST);
                    }
                    let _ = writer.join();
                });
            });
        }
    });
    let after = ctx.stats();
    let mut b = ctx.bursts.lock().unwrap_or_else(PoisonError::into_inner);
    b.pool += 1;
    if let (Ok(x), Ok(y)) = (before, after) {
        let waits = y.pool_waits.saturating_sub(x.pool_waits);
        b.pool_waits += waits;
        b.pool_exhausted += u64::from(waits > 0);
    }
}

/// A valid head over one 4 KiB block, held incomplete until `release`: until then the server
/// keeps it in a large block, and enough of them at once leave the pool without one.
fn held_head(ctx: &Ctx, rng: &mut Rng, release: Instant) {
    let req = Request::large_head(rng, ctx.args.max_head);
    let cut = req.head.len() - rng.range(8, 64);
    let Some(mut peer) = ctx.open(POOL_BURST) else {
        return;
    };
    let r = peer
        .s
        .write_all(&req.head[..cut])
        .map_err(|e| peer.io_fail(&e))
        .and_then(|()| {
            thread::sleep(release.saturating_duration_since(Instant::now()));
            peer.send_read(&req.head[cut..], &[], false)
        })
        .and_then(|r| req.check(&r).map_err(Fail::Wrong));
    match r {
        Ok(()) => ctx.book.right(POOL_BURST),
        Err(f) => ctx.book.fail(
            POOL_BURST,
            &f,
            &format!("head of {} bytes held at {cut}", req.head.len()),
        ),
    }
}

/// More connections at once than the server has slots, each with one request: those it
/// accepts must be answered; the rest it closes at once, and it must count each one.
fn slot_burst(ctx: &Ctx) -> Result<(), String> {
    let a = &ctx.args;
    let _g = ctx.gate.write().unwrap_or_else(PoisonError::into_inner);
    // Let connections opened just before the gate closed reach their slots.
    thread::sleep(Duration::from_millis(100));
    let refused_before = ctx.stats_refused.load(Relaxed);
    let before = ctx.stats()?;
    let n = a.workers * a.max_conns + 64;
    let req = Request::get("/plaintext", Expect::Plaintext);
    let mut peers = Vec::with_capacity(n);
    let mut refused_at_connect = 0;
    for _ in 0..n {
        match Peer::connect(a.addr) {
            Ok(mut p) => {
                // A refused connection may be closed before or after the request arrives.
                let _ = p.s.write_all(&req.head);
                peers.push(p);
            }
            // With TLS, a refused connection is closed during the handshake, in connect.
            Err(e) if closed_at_once(&e) => refused_at_connect += 1,
            Err(e) => ctx
                .book
                .fail(SLOT_BURST, &Fail::Io(format!("connect: {e}")), ""),
        }
    }
    let (mut served, mut refused) = (0, refused_at_connect);
    for _ in 0..refused_at_connect {
        ctx.book.other(SLOT_BURST, "refused at once (slots full)");
    }
    for p in &mut peers {
        match p
            .response(false)
            .and_then(|r| req.check(&r).map_err(Fail::Wrong))
        {
            Ok(()) => {
                served += 1;
                ctx.book.right(SLOT_BURST);
            }
            Err(f) if f.nothing_came() => {
                refused += 1;
                ctx.book.other(SLOT_BURST, "refused at once (slots full)");
            }
            Err(f) => ctx.book.fail(SLOT_BURST, &f, "burst connection"),
        }
    }
    drop(peers);
    // Reopen the gate only once the server has let go of the burst, so no other scenario
    // meets full slots.
    let limit = Instant::now() + Duration::from_secs(10);
    let after = loop {
        let s = ctx.stats()?;
        if s.connections_open < (a.max_conns / 2) as u64 || Instant::now() >= limit {
            break s;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let stats_refused = ctx.stats_refused.load(Relaxed) - refused_before;
    let mut b = ctx.bursts.lock().unwrap_or_else(PoisonError::into_inner);
    b.slot += 1;
    b.slot_served += served;
    b.slot_refused += refused;
    b.slot_refused_server +=
        (after.connections_rejected - before.connections_rejected).saturating_sub(stats_refused);
    Ok(())
}

/// Runs the bursts at their times within a phase.
fn bursts(ctx: &Ctx, seed: u64, start: Instant, until: Instant) {
    let span = until.saturating_duration_since(start);
    let mut next_pool = start + span.mul_f64(0.3);
    let mut next_slot = start + span.mul_f64(0.6);
    let mut n = 0;
    loop {
        let now = Instant::now();
        let next = next_pool.min(next_slot);
        if next + Duration::from_secs(1) > until {
            break;
        }
        thread::sleep(next.saturating_duration_since(now));
        if next == next_pool {
            n += 1;
            pool_burst(ctx, seed.wrapping_add(n));
            next_pool = Instant::now() + Duration::from_secs(30);
        } else {
            if let Err(e) = slot_burst(ctx) {
                ctx.book.note(format!("slot burst: {e}"));
            }
            next_slot = Instant::now() + Duration::from_secs(45);
        }
    }
}

pub fn phase(ctx: &Ctx, seed: u64, secs: u64) {
    let start = Instant::now();
    let until = start + Duration::from_secs(secs);
    thread::scope(|sc| {
        let rng = |i: u64| Rng::new(seed.wrapping_mul(1000).wrapping_add(i));
        let (mut r1, mut r2, mut r3, mut r4, mut r5, mut r6, mut r7, mut r8) = (
            rng(1),
            rng(2),
            rng(3),
            rng(4),
            rng(5),
            rng(6),
            rng(7),
            rng(8),
        );
        sc.spawn(move || keep_alive(ctx, &mut r1, until));
        sc.spawn(move || keep_alive(ctx, &mut r2, until));
        sc.spawn(move || pipelined(ctx, &mut r3, until));
        sc.spawn(move || chunked(ctx, &mut r4, until));
        sc.spawn(move || churn(ctx, &mut r5, until));
        sc.spawn(move || slow_within(ctx, &mut r6, until));
        sc.spawn(move || slow_past(ctx, until));
        sc.spawn(move || resets(ctx, &mut r7, until));
        sc.spawn(move || oversized(ctx, &mut r8, until));
        sc.spawn(move || bursts(ctx, seed, start, until));
    });
}
