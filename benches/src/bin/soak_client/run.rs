//! The run: the baseline, the phases, the checks and the tables.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError, RwLock};
use std::thread;
use std::time::Duration;

use crate::args::Args;
use crate::ctx::{Bursts, Ctx};
use crate::peer::{Fail, Peer};
use crate::request::{Expect, Request};
use crate::scenarios::{
    kind_of, phase, BODY_413, CHUNKED, CHURN, GONE, HEAD_431, KEEP_ALIVE, PIPELINED, POOL_BURST,
    RESET, SLOT_BURST, SLOW_408, SLOW_BODY, SLOW_OK,
};
use crate::server::{describe, fds, rss_kib, settle, Reading};
use crate::stream::tls;
use crate::tally::{Book, Kind};

struct Check {
    pub what: String,
    pub measured: String,
    pub limit: String,
    pub pass: bool,
}

pub fn run(args: Args) -> Result<bool, String> {
    let pid = args.pid;
    let warm_secs = args
        .warm_secs
        .unwrap_or((args.secs / 10).clamp(5, 60))
        .min(args.secs / 2);
    let main_secs = args.secs - warm_secs;
    let ctx = Ctx {
        args: args.clone(),
        gate: RwLock::new(()),
        book: Book::default(),
        bursts: Mutex::new(Bursts::default()),
        stats_refused: AtomicU64::new(0),
        key_updates: AtomicU64::new(0),
        key_update_failures: AtomicU64::new(0),
    };

    // 1. Baseline.
    let start = ctx.stats()?;
    thread::sleep(Duration::from_millis(300));
    let fd_base = fds(pid)?;
    let rss_start = rss_kib(pid)?;
    // Over TLS the answer to /stats may or may not still hold the block its request came in
    // (the record's ciphertext) when it counts: the most of a few readings.
    let mut rented_idle = 0;
    for _ in 0..if tls() { 8 } else { 1 } {
        rented_idle = rented_idle.max(ctx.stats()?.rented_blocks);
        thread::sleep(Duration::from_millis(20));
    }
    println!(
        "soak: baseline: {fd_base} fds, RSS {rss_start} KiB, pool slabs {} KiB, \
         /stats sees {rented_idle} block(s) rented (its own)",
        start.pool_allocated / 1024
    );

    // 2. Warm-up, then the main phase. A server that stopped answering fails the checks
    // that need it; the tables are written all the same.
    println!("soak: warm-up, {warm_secs} s");
    phase(&ctx, args.seed, warm_secs);
    let warm = settle(&ctx, rented_idle, fd_base, Duration::from_secs(5));
    println!("soak: after the warm-up: {}", describe(&warm));
    println!("soak: main phase, {main_secs} s");
    phase(&ctx, args.seed.wrapping_add(1), main_secs);
    let end = settle(&ctx, rented_idle, fd_base, Duration::from_secs(10));
    println!("soak: at the end: {}", describe(&end));

    // The server must still answer, as on the first day.
    let alive = Peer::connect(args.addr)
        .map_err(|e| Fail::Io(e.to_string()))
        .and_then(|mut p| {
            let req = Request::get("/plaintext", Expect::Plaintext);
            p.send_read(&req.head, &[], false)
                .and_then(|r| req.check(&r).map_err(Fail::Wrong))
        });

    // 3. The tables.
    let tallies = ctx
        .book
        .tallies
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let bursts = ctx.bursts.lock().unwrap_or_else(PoisonError::into_inner);
    let mut md = String::new();
    if let Some(driver) = start.driver {
        let _ = writeln!(md, "I/O driver, as `/stats` names it: `{driver}`.\n");
    }
    let _ = writeln!(
        md,
        "| scenario | kind | exchanges | right | wrong | missing | not checked (by design) |\n\
         |---|---|---:|---:|---:|---:|---|"
    );
    let (mut valid, mut valid_bad, mut refusals, mut refusals_bad, mut total) = (0, 0, 0, 0, 0);
    let order = [
        KEEP_ALIVE, PIPELINED, CHUNKED, CHURN, SLOW_OK, SLOW_BODY, POOL_BURST, SLOT_BURST,
        SLOW_408, HEAD_431, BODY_413, RESET, GONE,
    ];
    for sc in order {
        let t = tallies.get(sc);
        let (right, wrong, missing) = t.map_or((0, 0, 0), |t| (t.right, t.wrong, t.missing));
        let others = t.map_or(String::new(), |t| {
            t.other
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join("; ")
        });
        let unchecked: u64 = t.map_or(0, |t| t.other.values().sum());
        // Chunked over-limit outcomes are also counted right; they are listed for the detail.
        let unchecked = if sc == BODY_413 { 0 } else { unchecked };
        let exchanges = right + wrong + missing + unchecked;
        total += exchanges;
        let kind = match kind_of(sc) {
            Kind::Valid => {
                valid += right + wrong + missing;
                valid_bad += wrong + missing;
                "valid"
            }
            Kind::Refusal => {
                refusals += right + wrong + missing;
                refusals_bad += wrong + missing;
                "refusal"
            }
            Kind::Abort => "abort",
        };
        let _ = writeln!(
            md,
            "| {sc} | {kind} | {exchanges} | {right} | {wrong} | {missing} | {} |",
            if others.is_empty() { "–" } else { &others }
        );
    }
    let _ = writeln!(md, "| **all** | | **{total}** | | | | |");

    let rss_change = match (&warm, &end) {
        (Ok(w), Ok(e)) => Some((e.rss as f64 - w.rss as f64) / w.rss.max(1) as f64 * 100.0),
        _ => None,
    };
    let unreadable = |r: &Result<Reading, String>| match r {
        Ok(_) => String::new(),
        Err(e) => e.clone(),
    };
    let ends = end.as_ref().ok();
    let end_stats = ends.map(|e| e.stats).unwrap_or_default();
    let unexplained = bursts
        .slot_refused
        .saturating_sub(bursts.slot_refused_server);
    let mut checks = vec![
        Check {
            what: "wrong or missing answers to valid requests".to_owned(),
            measured: format!("{valid_bad} of {valid}"),
            limit: "0".to_owned(),
            pass: valid_bad == 0 && valid > 0,
        },
        Check {
            what: "refusals by design (408, 413, 431) not answered as designed".to_owned(),
            measured: format!("{refusals_bad} of {refusals}"),
            limit: "0".to_owned(),
            pass: refusals_bad == 0 && refusals > 0,
        },
        Check {
            what: "slot-burst refusals: seen by the client / counted by the server".to_owned(),
            measured: format!(
                "{} / {} in {} bursts ({} burst connections served)",
                bursts.slot_refused, bursts.slot_refused_server, bursts.slot, bursts.slot_served
            ),
            limit: "equal, > 0".to_owned(),
            pass: unexplained == 0
                && bursts.slot_refused == bursts.slot_refused_server
                && bursts.slot_refused > 0,
        },
        Check {
            what: "pool bursts that exhausted the pool (pool waits)".to_owned(),
            measured: format!(
                "{} of {} (+{} waits)",
                bursts.pool_exhausted, bursts.pool, bursts.pool_waits
            ),
            limit: "> 0".to_owned(),
            pass: bursts.pool_exhausted > 0,
        },
        Check {
            what: "pool blocks rented after the run (`/stats`, less the block of the /stats \
                   answer itself)"
                .to_owned(),
            measured: ends.map_or(unreadable(&end), |e| {
                let n = e.stats.rented_blocks;
                format!("{} ({n} − {rented_idle})", n.saturating_sub(rented_idle))
            }),
            limit: "0".to_owned(),
            pass: ends.is_some_and(|e| e.stats.rented_blocks <= rented_idle),
        },
        Check {
            what: "connections open after the run (`/stats`, less the /stats one)".to_owned(),
            measured: ends.map_or(unreadable(&end), |e| {
                e.stats.connections_open.saturating_sub(1).to_string()
            }),
            limit: "0".to_owned(),
            pass: ends.is_some_and(|e| e.stats.connections_open <= 1),
        },
        Check {
            what: "open fds (`/proc/PID/fd`): start / warm / end".to_owned(),
            measured: format!(
                "{fd_base} / {} / {}",
                warm.as_ref().map_or("–".to_owned(), |w| w.fds.to_string()),
                ends.map_or(unreadable(&end), |e| e.fds.to_string())
            ),
            limit: format!("end = {fd_base}"),
            pass: ends.is_some_and(|e| e.fds == fd_base),
        },
        Check {
            what: "RSS (`VmRSS`): start / warm / end".to_owned(),
            measured: match (&warm, &end, rss_change) {
                (Ok(w), Ok(e), Some(change)) => format!(
                    "{rss_start} / {} / {} KiB ({change:+.1} % from warm; \
                     pool slabs {} / {} / {} KiB)",
                    w.rss,
                    e.rss,
                    start.pool_allocated / 1024,
                    w.stats.pool_allocated / 1024,
                    e.stats.pool_allocated / 1024
                ),
                _ => format!("{}{}", unreadable(&warm), unreadable(&end)),
            },
            limit: "end within ±10 % of warm".to_owned(),
            pass: rss_change.is_some_and(|c| c.abs() <= 10.0),
        },
        Check {
            what: "server still answering (`GET /plaintext` after the run)".to_owned(),
            measured: match &alive {
                Ok(()) => "200 Hello, World!".to_owned(),
                Err(f) => f.to_string(),
            },
            limit: "200".to_owned(),
            pass: alive.is_ok(),
        },
    ];
    if tls() {
        let sent = ctx.key_updates.load(Relaxed);
        let unsent = ctx.key_update_failures.load(Relaxed);
        if args.key_update_every > 0 {
            checks.push(Check {
                what: format!(
                    "TLS KeyUpdates the client sent, each asking for the server's, before every \
                     {}th exchange on a connection (the exchanges after each are counted above)",
                    args.key_update_every
                ),
                measured: format!("{sent} sent, {unsent} not sent"),
                limit: "> 0 sent, 0 not sent".to_owned(),
                pass: sent > 0 && unsent == 0,
            });
        }
        checks.push(Check {
            what: "TLS handshakes in progress after the run; times accepting waited at the \
                   handshake bound over the run (`/stats` tls_handshakes, tls_accept_holds)"
                .to_owned(),
            measured: ends.map_or(unreadable(&end), |e| {
                format!(
                    "{}; {} holds",
                    e.stats.tls_handshakes,
                    e.stats
                        .tls_accept_holds
                        .saturating_sub(start.tls_accept_holds)
                )
            }),
            limit: "0".to_owned(),
            pass: ends.is_some_and(|e| e.stats.tls_handshakes == 0),
        });
        checks.push(Check {
            what: "KeyUpdates the server sent over the run, each read by the client under the key \
                   it announced (`/stats` tls_key_updates)"
                .to_owned(),
            measured: ends.map_or(unreadable(&end), |e| {
                e.stats
                    .tls_key_updates
                    .saturating_sub(start.tls_key_updates)
                    .to_string()
            }),
            limit: "> 0".to_owned(),
            pass: ends.is_some_and(|e| e.stats.tls_key_updates > start.tls_key_updates),
        });
    }
    if ends.is_some() {
        let _ =
            writeln!(
            md,
            "\nServer counters over the run (`/stats`): {} requests answered, {} header timeouts, \
             {} connections refused at full slots, {} pool waits.",
            end_stats.requests.saturating_sub(start.requests),
            end_stats.header_timeouts.saturating_sub(start.header_timeouts),
            end_stats
                .connections_rejected
                .saturating_sub(start.connections_rejected),
            end_stats.pool_waits.saturating_sub(start.pool_waits)
        );
        if tls() {
            let _ = writeln!(
                md,
                "\nTLS 1.3 on every connection (the client's suites in turn: AES-128-GCM, \
                 AES-256-GCM, ChaCha20-Poly1305; resumed by tickets where the client has one): \
                 {} handshakes failed (`/stats` tls_handshake_failures), {} KeyUpdates sent by \
                 the client.",
                end_stats
                    .tls_handshake_failures
                    .saturating_sub(start.tls_handshake_failures),
                ctx.key_updates.load(Relaxed)
            );
        }
    }
    let failures = ctx
        .book
        .failures
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if !failures.is_empty() {
        let _ = writeln!(
            md,
            "\nFailures ({} in all, the first {} listed):\n",
            ctx.book.failure_count.load(Relaxed),
            failures.len()
        );
        for f in failures.iter() {
            let _ = writeln!(md, "* {f}");
        }
    }
    let _ = writeln!(
        md,
        "\n| check | measured | limit | result |\n|---|---|---|---|"
    );
    for c in &checks {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            c.what,
            c.measured,
            c.limit,
            if c.pass { "pass" } else { "**FAIL**" }
        );
    }
    print!("\n{md}");
    if let Some(path) = &args.out {
        std::fs::write(path, &md).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let pass = checks.iter().all(|c| c.pass);
    println!("\nsoak: {}", if pass { "PASS" } else { "FAIL" });
    Ok(pass)
}
