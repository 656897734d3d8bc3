//! The WebSocket load generator of the WebSocket load harness (`benches/load/ws.sh`): N
//! upgraded connections, each keeping a window of masked messages in flight for a duration,
//! every echo checked byte for byte ([`bufslab_benches::run_load`]).
//!
//! Prints a human summary and a `WSRESULT key=value ...` line for scripts. Exits 1 on any
//! failed connection, protocol error or differing echo.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::time::Duration;

use bufslab_benches::{run_load, LoadConfig};

const USAGE: &str = "\
usage: ws_load --addr ADDR [flags]

  --addr ADDR         the echo server (required)
  --path PATH         request target of the upgrade (default /)
  --connections N     connections, all upgraded before the clock starts (default 64)
  --size BYTES        payload bytes per message; a K suffix for KiB: 32, 4K, 64K (default 32)
  --window N          messages in flight per connection (default 1)
  --duration SECS     seconds of sending, fractions allowed (default 5)
  --threads N         client threads, each an event loop over its share of the connections
                      (default 1)
  --text              text messages (ASCII) instead of binary
  -h, --help          this text

Output: messages/s, latency percentiles (first byte written to last echoed byte read) and the
client's own CPU time, then one line
  WSRESULT messages=N duration_us=N mps=N p50_us=N p90_us=N p99_us=N p999_us=N max_us=N client_cpu_pct=N
";

fn parse_size(v: &str) -> Option<usize> {
    let (num, mul) = match v.strip_suffix(['K', 'k']) {
        Some(n) => (n, 1024),
        None => (v, 1),
    };
    num.parse::<usize>().ok()?.checked_mul(mul)
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<LoadConfig>, String> {
    let mut addr: Option<SocketAddr> = None;
    let mut c = LoadConfig::new(([127, 0, 0, 1], 8080).into());
    let parsed = bufslab_benches::parse_flags(args, |f| {
        match f.name() {
            "--addr" => addr = Some(f.parse("an address like 127.0.0.1:8080")?),
            "--path" => c.path = f.value()?,
            "--connections" => c.connections = f.parse::<NonZeroUsize>("a positive number")?.get(),
            "--size" => {
                let v = f.value()?;
                c.size = parse_size(&v).ok_or_else(|| f.bad(&v, "a size like 32, 4K or 64K"))?;
            }
            "--window" => c.window = f.parse::<NonZeroUsize>("a positive number")?.get(),
            "--duration" => {
                let v = f.value()?;
                c.duration = v
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| f.bad(&v, "a positive number of seconds"))?;
            }
            "--threads" => c.threads = f.parse::<NonZeroUsize>("a positive number")?.get(),
            "--text" => c.text = true,
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    if parsed.is_none() {
        return Ok(None);
    }
    c.addr = addr.ok_or("flag `--addr` is required")?;
    Ok(Some(c))
}

fn main() -> ExitCode {
    let config =
        match bufslab_benches::args_or_exit("ws_load", USAGE, parse_args(std::env::args().skip(1)))
        {
            Ok(c) => c,
            Err(code) => return code,
        };
    let report = match run_load(&config) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ws_load: {e}");
            return ExitCode::FAILURE;
        }
    };
    let us = |q: f64| report.latency(q).as_secs_f64() * 1e6;
    let cpu = report.client_cpu_percent();
    println!(
        "{} connections, {} B {} messages, window {}, {:.2} s: {} echoes checked, {:.0} messages/s",
        config.connections,
        config.size,
        if config.text { "text" } else { "binary" },
        config.window,
        report.elapsed.as_secs_f64(),
        report.messages,
        report.messages_per_sec()
    );
    println!(
        "latency p50 {:.1} us, p90 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us",
        us(0.5),
        us(0.9),
        us(0.99),
        us(0.999),
        us(1.0)
    );
    match cpu {
        Some(p) => println!("client CPU {p:.0} % of one core"),
        None => println!("client CPU unknown (no /proc/thread-self/schedstat)"),
    }
    println!(
        "WSRESULT messages={} duration_us={} mps={:.0} p50_us={:.0} p90_us={:.0} p99_us={:.0} p999_us={:.0} max_us={:.0} client_cpu_pct={:.0}",
        report.messages,
        report.elapsed.as_micros(),
        report.messages_per_sec(),
        us(0.5),
        us(0.9),
        us(0.99),
        us(0.999),
        us(1.0),
        cpu.unwrap_or(-1.0)
    );
    ExitCode::SUCCESS
}
