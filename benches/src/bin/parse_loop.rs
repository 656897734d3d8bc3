//! Parses one codec fixture N times in a loop: the program for counting the parser's
//! instructions per head under callgrind, which (unlike a timing) does not move with the
//! machine's load.
//!
//! ```text
//! cargo build --release -p bufslab-benches --bin parse_loop
//! valgrind --tool=callgrind --toggle-collect='parse_loop::run' \
//!     target/release/parse_loop many_headers 1000
//! ```
//!
//! Instructions per head = callgrind's "Collected" / N. Fixtures: `techempower`, `browser`,
//! `many_headers`, `post_json` (`http-codec/tests/fixtures/`). A third argument forces a
//! backend (`portable`, `sse2`, `avx2`; default `auto`, the fastest this CPU has), or runs a
//! peer instead, `httparse` or `pico`, reading the same fields (`httparse-framed` and
//! `pico-framed` also decide the framing over them, as bufslab-http's parse does); count those
//! with `--toggle-collect='parse_loop::run_peer'`.

use std::hint::black_box;
use std::process::ExitCode;

use bufslab_benches::{sum_bufslab, Contenders, FIXTURES};
use bufslab_http::{Backend, Config, HeaderSlot, Parser, Status};

/// Parses `buf` `n` times, reading what a server reads of each head (as the codec bench does).
#[inline(never)]
fn run(parser: &mut Parser, slots: &mut [HeaderSlot], buf: &[u8], n: usize) -> usize {
    let mut parsed = 0;
    for _ in 0..n {
        if let Ok(Status::Complete(req)) = parser.parse(black_box(buf), slots) {
            black_box((sum_bufslab(&req), req.framing(), req.keep_alive()));
            parsed += 1;
        }
    }
    parsed
}

/// A peer parser instead of bufslab-http.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Peer {
    Httparse,
    Pico,
    HttparseFramed,
    PicoFramed,
}

/// Parses `buf` `n` times with `peer`, reading the same fields as [`run`].
#[inline(never)]
fn run_peer(c: &mut Contenders, peer: Peer, buf: &'static [u8], n: usize) -> usize {
    let mut parsed = 0;
    for _ in 0..n {
        parsed += match peer {
            Peer::Httparse => c.httparse(black_box(buf), 1),
            Peer::Pico => c.pico(black_box(buf), 1),
            Peer::HttparseFramed => c.httparse_framed(black_box(buf), 1),
            Peer::PicoFramed => c.pico_framed(black_box(buf), 1),
        };
    }
    parsed
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_default();
    let n = args.next().map_or(Ok(1000), |s| s.parse::<usize>());
    let which = args.next();
    let peer = match which.as_deref() {
        Some("httparse") => Some(Peer::Httparse),
        Some("pico") => Some(Peer::Pico),
        Some("httparse-framed") => Some(Peer::HttparseFramed),
        Some("pico-framed") => Some(Peer::PicoFramed),
        _ => None,
    };
    let backend = match which {
        None => Some(Backend::Auto),
        Some(_) if peer.is_some() => Some(Backend::Auto),
        Some(b) => Backend::ALL.iter().copied().find(|k| k.to_string() == b),
    };
    let (Some(&(_, buf)), Ok(n), Some(backend)) =
        (FIXTURES.iter().find(|(f, _)| *f == name), n, backend)
    else {
        let names: Vec<&str> = FIXTURES.iter().map(|(f, _)| *f).collect();
        let backends: Vec<String> = Backend::ALL.iter().map(|b| b.to_string()).collect();
        eprintln!(
            "usage: parse_loop <{}> [count] [{}|httparse|pico|httparse-framed|pico-framed]",
            names.join("|"),
            backends.join("|")
        );
        return ExitCode::from(2);
    };
    if !backend.is_supported() {
        eprintln!("parse_loop: this CPU cannot run the {backend} backend");
        return ExitCode::from(2);
    }
    if let Some(peer) = peer {
        let parsed = run_peer(&mut Contenders::new(), peer, buf, n);
        println!("{name}: {parsed} heads parsed");
        return ExitCode::SUCCESS;
    }
    let mut parser = Parser::new(Config::DEFAULT.with_backend(backend));
    let mut slots = [HeaderSlot::EMPTY; 64];
    let parsed = run(&mut parser, &mut slots, buf, n);
    if parsed != n {
        eprintln!("parse_loop: {name} was rejected");
        return ExitCode::FAILURE;
    }
    println!(
        "{name}: {parsed} heads parsed ({} backend)",
        backend.resolved()
    );
    ExitCode::SUCCESS
}
