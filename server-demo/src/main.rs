//! `cargo run --release -p server-demo`: serves http://127.0.0.1:8080 until SIGINT/SIGTERM.
//!
//! Signals: the main thread blocks in `signal_hook::iterator::Signals`, which installs the
//! handlers and wakes through its own self-pipe; on the first SIGINT or SIGTERM it asks the
//! workers to stop (they are woken through their `mio::Waker`s), waits for them to finish the
//! responses in flight, prints a one-line summary and exits 0. The workers never see signals.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use server_demo::{parse_args, Command, Config, Server, ServerError, SMALL_BLOCK, USAGE};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

#[cfg(feature = "dhat-heap")]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[cfg(feature = "dhat-heap")]
fn allocations() -> u64 {
    dhat::HeapStats::get().total_blocks
}

fn main() -> ExitCode {
    #[cfg(feature = "dhat-heap")]
    let _profiler = dhat::Profiler::new_heap();

    let config = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Serve(c)) => c,
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("server-demo: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    #[cfg(feature = "dhat-heap")]
    let config = Config {
        alloc_counter: Some(allocations),
        ..config
    };
    // Install the handlers before the workers start, so an early signal is not lost.
    let mut signals = match Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("server-demo: cannot install signal handlers: {e}");
            return ExitCode::FAILURE;
        }
    };
    let pool_line = describe_pool(&config);
    let workers = config.workers;
    let schemes: Vec<&str> = std::iter::once(config.tls.is_some())
        .chain(config.listeners.iter().map(|l| l.tls.is_some()))
        .map(|https| if https { "https" } else { "http" })
        .collect();
    let server = match Server::start(config) {
        Ok(s) => s,
        // An explicit `--io uring` that cannot run is a usage error, like a bad flag.
        Err(e @ ServerError::Uring(_)) => {
            eprintln!("server-demo: {e}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("server-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addrs: Vec<String> = schemes
        .iter()
        .zip(server.local_addrs())
        .map(|(scheme, addr)| match *scheme {
            "https" => format!("{scheme}://{addr} (TLS on {})", bufslab_tls::CRYPTO_LIBRARY),
            _ => format!("{scheme}://{addr}"),
        })
        .collect();
    println!(
        "server-demo listening on {} with {workers} worker(s); {pool_line}",
        addrs.join(" and ")
    );
    if let Some(sig) = signals.forever().next() {
        let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
        eprintln!("server-demo: {name}: stopping (finishing responses in flight)");
    }
    match server.stop() {
        Ok(summary) => {
            println!("server-demo: {summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("server-demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn describe_pool(c: &Config) -> String {
    let p = &c.pool;
    format!(
        "pool: {SMALL_BLOCK} B blocks x {} per slab, {} slab(s) preallocated ({} KiB), \
         large class {} B, bound {} MiB, {} free list, local cache {} blocks/worker; \
         max-conns {}/worker, accept-batch {}, max-head {} B, max-body {} B, \
         header timeout {} ms, idle timeout {} ms",
        p.blocks_per_slab,
        p.prealloc_slabs,
        SMALL_BLOCK * p.blocks_per_slab * p.prealloc_slabs / 1024,
        c.large_block(),
        p.max_bytes >> 20,
        p.strategy.name(),
        p.local_capacity,
        c.max_conns,
        c.accept_batch,
        c.max_head,
        c.max_body,
        c.header_timeout.as_millis(),
        c.idle_timeout.as_millis(),
    )
}
