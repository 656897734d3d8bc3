//! Head parsing against httparse and picohttpparser, timed in turn: each round times every
//! contender once on a fixture (a few milliseconds each, the order rotating from round to
//! round), and the table gives the median time and the median of the per-round ratios. On a
//! shared machine whose speed drifts over seconds, ratios taken within one round are steadier
//! than ratios of medians that criterion measured one contender after the other.
//!
//! Run: `cargo bench -p bufslab-benches --bench codec_interleaved -- [ROUNDS]` (default 31; pin
//! with `taskset -c N`). Without `--bench` (as `cargo test` runs it) it does one short round.

use std::time::Instant;

mod parsers;
use parsers::{fixtures, Contenders};

/// How long one contender runs on one fixture in one round.
const SLICE_NS: f64 = 4e6;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs contender `which` (0 bufslab, 1 httparse, 2 pico) `reps` times over `buf`;
/// nanoseconds per request head.
fn time(c: &mut Contenders, which: usize, buf: &'static [u8], heads: usize, reps: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        match which {
            0 => c.bufslab(buf, heads),
            1 => c.httparse(buf, heads),
            _ => c.pico(buf, heads),
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
    println!("{rounds} rounds; ns per request head, medians; ratios: median (min-max) of the per-round ratios");
    println!();
    println!("| fixture | bufslab | httparse | pico | bufslab / pico | bufslab / httparse |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, buf, heads) in fixtures() {
        // Repetitions that fill one slice, from a short calibration run of the slowest parser.
        let reps = if measuring {
            let per_rep = time(&mut c, 1, buf, heads, 1000) * heads as f64;
            ((SLICE_NS / per_rep) as usize).max(1)
        } else {
            1
        };
        let mut ns = [vec![], vec![], vec![]];
        let (mut vs_pico, mut vs_httparse) = (vec![], vec![]);
        for round in 0..rounds {
            let mut t = [0.0; 3];
            for k in 0..3 {
                let which = (round + k) % 3;
                t[which] = time(&mut c, which, buf, heads, reps);
            }
            for (which, &v) in t.iter().enumerate() {
                ns[which].push(v);
            }
            vs_pico.push(t[0] / t[2]);
            vs_httparse.push(t[0] / t[1]);
        }
        let range = |v: &[f64]| {
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
            format!("({lo:.2}-{hi:.2})")
        };
        let (rp, rh) = (range(&vs_pico), range(&vs_httparse));
        let [b, h, p] = ns.map(|mut v| median(&mut v));
        println!(
            "| {name} | {b:.1} | {h:.1} | {p:.1} | {:.2} {rp} | {:.2} {rh} |",
            median(&mut vs_pico),
            median(&mut vs_httparse),
        );
    }
}
