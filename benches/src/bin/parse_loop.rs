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
//! `many_headers`, `post_json` (`http-codec/tests/fixtures/`).

use std::hint::black_box;
use std::process::ExitCode;

use bufslab_benches::{sum_bufslab, FIXTURES};
use bufslab_http::{HeaderSlot, Parser, Status};

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

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_default();
    let n = args.next().map_or(Ok(1000), |s| s.parse::<usize>());
    let (Some(&(_, buf)), Ok(n)) = (FIXTURES.iter().find(|(f, _)| *f == name), n) else {
        let names: Vec<&str> = FIXTURES.iter().map(|(f, _)| *f).collect();
        eprintln!("usage: parse_loop <{}> [count]", names.join("|"));
        return ExitCode::from(2);
    };
    let mut parser = Parser::default();
    let mut slots = [HeaderSlot::EMPTY; 64];
    let parsed = run(&mut parser, &mut slots, buf, n);
    if parsed != n {
        eprintln!("parse_loop: {name} was rejected");
        return ExitCode::FAILURE;
    }
    println!("{name}: {parsed} heads parsed");
    ExitCode::SUCCESS
}
