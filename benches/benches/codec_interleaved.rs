//! Head parsing against httparse and picohttpparser, timed in turn, with each bufslab-http
//! backend this CPU runs as a contender of its own: each round times every contender once on
//! a fixture (a few milliseconds each, the order rotating from round to round), and the table
//! gives the median time and, per backend, the median of the per-round ratios to the faster of
//! httparse and picohttpparser in that round. On a shared machine whose speed drifts over
//! seconds, ratios taken within one round are steadier than ratios of medians that criterion
//! measured one contender after the other.
//!
//! Two tables: every contender reads every field of each head; then every contender also
//! decides what a server must before it reads the body (framing, persistence, one Host:
//! `bufslab_benches::decide_framing` over the peers' fields), which bufslab-http's parse
//! already includes, so the second table is the whole job's cost.
//!
//! Run: `cargo bench -p bufslab-benches --bench codec_interleaved -- [ROUNDS]` (default 101;
//! pin with `taskset -c N`). Without `--bench` (as `cargo test` runs it) it does one short
//! round.

use std::time::Instant;

use bufslab_benches::{backends, fixtures, Contenders};

/// How long one contender runs on one fixture in one round.
const SLICE_NS: f64 = 4e6;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A contender: bufslab-http with the `k`-th backend, httparse or picohttpparser (then
/// deciding the framing over their fields, or not).
#[derive(Clone, Copy)]
enum Who {
    Bufslab(usize),
    Httparse,
    Pico,
    HttparseFramed,
    PicoFramed,
}

/// Runs `who` `reps` times over `buf`; nanoseconds per request head.
fn time(c: &mut Contenders, who: Who, buf: &'static [u8], heads: usize, reps: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        match who {
            Who::Bufslab(k) => c.bufslab(k, buf, heads),
            Who::Httparse => c.httparse(buf, heads),
            Who::Pico => c.pico(buf, heads),
            Who::HttparseFramed => c.httparse_framed(buf, heads),
            Who::PicoFramed => c.pico_framed(buf, heads),
        };
    }
    start.elapsed().as_nanos() as f64 / (reps * heads) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let measuring = args.iter().any(|a| a == "--bench");
    let rounds = match args.iter().find_map(|a| a.parse::<usize>().ok()) {
        Some(r) if measuring => r.max(1),
        _ if measuring => 101,
        _ => 1,
    };
    let mut c = Contenders::new();
    if !measuring {
        println!("one cold round: a smoke test, not a measurement (run with `cargo bench`)");
    }
    println!("{rounds} rounds; ns per request head, medians; ratios: median (min-max) of the per-round ratios of each bufslab backend to the faster of httparse and pico in that round");
    for framed in [false, true] {
        println!();
        if framed {
            println!("Every field read, and the framing decided by every contender:");
        } else {
            println!("Every field read:");
        }
        println!();
        table(&mut c, rounds, measuring, framed);
    }
}

/// One table: every fixture, every contender, the peers deciding the framing or not.
fn table(c: &mut Contenders, rounds: usize, measuring: bool, framed: bool) {
    let backends = backends();
    let mut who: Vec<Who> = (0..backends.len()).map(Who::Bufslab).collect();
    if framed {
        who.extend([Who::HttparseFramed, Who::PicoFramed]);
    } else {
        who.extend([Who::Httparse, Who::Pico]);
    }
    let names: Vec<String> = backends
        .iter()
        .map(|b| format!("bufslab {b}"))
        .chain(["httparse".into(), "pico".into()])
        .collect();
    let ratio_cols: Vec<String> = backends
        .iter()
        .map(|b| format!("{b} / best peer"))
        .collect();
    println!(
        "| fixture | {} | {} |",
        names.join(" | "),
        ratio_cols.join(" | ")
    );
    println!(
        "|---|{}|",
        vec!["---:"; names.len() + ratio_cols.len()].join("|")
    );
    let mut geo = vec![0f64; backends.len()];
    let fixtures = fixtures();
    for &(name, buf, heads) in &fixtures {
        // Repetitions that fill one slice, from a short calibration run of httparse.
        let reps = if measuring {
            let per_rep = time(c, Who::Httparse, buf, heads, 1000) * heads as f64;
            ((SLICE_NS / per_rep) as usize).max(1)
        } else {
            1
        };
        let mut ns = vec![vec![]; who.len()];
        let mut ratios = vec![vec![]; backends.len()];
        for round in 0..rounds {
            let mut t = vec![0.0; who.len()];
            // The order rotates from round to round, so no contender always runs first.
            for k in 0..who.len() {
                let w = (round + k) % who.len();
                t[w] = time(c, who[w], buf, heads, reps);
            }
            let best_peer = t[backends.len()].min(t[backends.len() + 1]);
            for (k, r) in ratios.iter_mut().enumerate() {
                r.push(t[k] / best_peer);
            }
            for (w, &v) in t.iter().enumerate() {
                ns[w].push(v);
            }
        }
        let range = |v: &[f64]| {
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
            format!("({lo:.2}-{hi:.2})")
        };
        let times: Vec<String> = ns.iter_mut().map(|v| format!("{:.1}", median(v))).collect();
        let rs: Vec<String> = ratios
            .iter_mut()
            .enumerate()
            .map(|(k, v)| {
                let rg = range(v);
                let m = median(v);
                geo[k] += m.ln();
                format!("{m:.2} {rg}")
            })
            .collect();
        println!("| {name} | {} | {} |", times.join(" | "), rs.join(" | "));
    }
    let g: Vec<String> = geo
        .iter()
        .map(|s| format!("{:.2}", (s / fixtures.len() as f64).exp()))
        .collect();
    println!(
        "| geometric mean | {} | {} |",
        vec![""; names.len()].join(" | "),
        g.join(" | ")
    );
}
