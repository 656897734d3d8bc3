//! The client of the fault soak (`benches/load/soak.sh`): drives a running server-demo on
//! loopback with a mix of good and hostile clients for a bounded time, checks every answer
//! byte for byte, and then checks that the server is back where it started.
//!
//! `soak_client --addr ADDR --pid PID [flags]` runs in three steps:
//!
//! 1. **baseline**: waits until the server answers, reads its open descriptors
//!    (`/proc/PID/fd`) and what the pool reports as rented while answering `/stats` itself;
//! 2. **warm-up** (`--warm-secs`) and **main** (the rest of `--secs`): every scenario
//!    (`scenarios.rs`) runs on its own threads until the phase's deadline; after each phase the
//!    client closes its connections and waits until the server holds none of them (`/stats`),
//!    then reads the server's descriptors and RSS (`VmRSS` of `/proc/PID/status`); the figures
//!    after the warm-up are the "warm" ones;
//! 3. **checks**: prints the per-scenario table and the checks table (also written as Markdown
//!    to `--out`), and exits 1 if a check failed.
//!
//! Every exchange falls in one of three bins. A *valid request* must get the right response:
//! status, framing and body compared byte for byte with what was sent (an echo) or what the
//! route returns. A *refusal by design* (a head over `--max-head`, a body over `--max-body`, a
//! head trickled slower than the header timeout) must get its status (431, 413, 408) and the
//! close. A *deliberate abort* (a reset mid-head, mid-body or mid-response, a client gone before
//! the answer) has no expected answer; what it must not do is leave anything behind, which the
//! end checks see. Connections the server refuses during a deliberate burst over its connection
//! slots are counted apart, and must match the server's own `connections_rejected` count.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::thread;
use std::time::Duration;

mod args;
mod ctx;
mod peer;
mod request;
mod rng;
mod run;
mod scenarios;
mod server;
mod stream;
mod tally;

use args::{parse_args, USAGE};

fn main() -> ExitCode {
    let args = match bufslab_benches::args_or_exit(
        "soak_client",
        USAGE,
        parse_args(std::env::args().skip(1)),
    ) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if let Some(ca) = &args.tls_ca {
        if let Err(e) = stream::init_tls(ca) {
            eprintln!("soak_client: --tls-ca {e}");
            return ExitCode::from(2);
        }
    }
    // However the server behaves, the client ends: every read and write is bounded by
    // IO_TIMEOUT, and this watchdog bounds the whole.
    let hard_limit = Duration::from_secs(args.secs + 300);
    thread::spawn(move || {
        thread::sleep(hard_limit);
        eprintln!("soak_client: still running {hard_limit:?} after the start; giving up");
        std::process::exit(1);
    });
    match run::run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak_client: {e}");
            ExitCode::FAILURE
        }
    }
}
