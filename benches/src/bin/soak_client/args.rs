//! The command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub const USAGE: &str = "\
usage: soak_client --pid PID [flags]

  --addr ADDR               server address (default 127.0.0.1:8080)
  --pid PID                 the server's process id, for /proc/PID/fd and /proc/PID/status
  --secs S                  traffic time, warm-up included (default 600)
  --warm-secs S             warm-up before the warm RSS figure (default: secs / 10, 5 ..= 60)
  --workers N               the server's --workers (default 2)
  --max-conns N             the server's --max-conns, per worker (default 64)
  --max-head N              the server's --max-head (default 8192)
  --max-body N              the server's --max-body (default 1048576)
  --header-timeout-ms N     the server's --header-timeout-ms (default 2000)
  --idle-timeout-ms N       the server's --idle-timeout-ms (default 5000)
  --pool-burst-conns N      connections in each pool-exhausting burst (default 48)
  --seed N                  random seed (default 1)
  --tls-ca FILE             speak TLS 1.3 on every connection, trusting the PEM certificate(s)
                            in FILE (the server's --tls-cert); the three suites in turn
  --key-update-every N      with --tls: on the keep-alive, pipelined and chunked connections,
                            a KeyUpdate (asking the server for one too) before every Nth
                            exchange; 0 for none (default 16)
  --out FILE                write the tables there as Markdown
  -h, --help                this text

Exits 0 when every check passes, 1 when one fails, 2 on a bad command line.
";

#[derive(Clone, Debug)]
pub struct Args {
    pub addr: SocketAddr,
    pub pid: u32,
    pub secs: u64,
    pub warm_secs: Option<u64>,
    pub workers: usize,
    pub max_conns: usize,
    pub max_head: usize,
    pub max_body: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub pool_burst_conns: usize,
    pub seed: u64,
    pub out: Option<PathBuf>,
    pub tls_ca: Option<PathBuf>,
    pub key_update_every: usize,
}

pub fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        addr: ([127, 0, 0, 1], 8080).into(),
        pid: 0,
        secs: 600,
        warm_secs: None,
        workers: 2,
        max_conns: 64,
        max_head: 8192,
        max_body: 1 << 20,
        header_timeout: Duration::from_millis(2000),
        idle_timeout: Duration::from_millis(5000),
        pool_burst_conns: 48,
        seed: 1,
        out: None,
        tls_ca: None,
        key_update_every: 16,
    };
    let parsed = bufslab_benches::parse_flags(args, |f| {
        match f.name() {
            "--addr" => a.addr = f.parse("an address like 127.0.0.1:8080")?,
            "--pid" => a.pid = f.parse("a process id")?,
            "--secs" => a.secs = f.parse("a number of seconds")?,
            "--warm-secs" => a.warm_secs = Some(f.parse("a number of seconds")?),
            "--workers" => a.workers = f.parse("a number")?,
            "--max-conns" => a.max_conns = f.parse("a number")?,
            "--max-head" => a.max_head = f.parse("a number of bytes")?,
            "--max-body" => a.max_body = f.parse("a number of bytes")?,
            "--header-timeout-ms" => {
                a.header_timeout = Duration::from_millis(f.parse("milliseconds")?);
            }
            "--idle-timeout-ms" => a.idle_timeout = Duration::from_millis(f.parse("milliseconds")?),
            "--pool-burst-conns" => a.pool_burst_conns = f.parse("a number")?,
            "--seed" => a.seed = f.parse("a number")?,
            "--out" => a.out = Some(PathBuf::from(f.value()?)),
            "--tls-ca" => a.tls_ca = Some(PathBuf::from(f.value()?)),
            "--key-update-every" => a.key_update_every = f.parse("a number")?,
            _ => return Err(f.unknown()),
        }
        Ok(())
    })?;
    if parsed.is_none() {
        return Ok(None);
    }
    if a.pid == 0 {
        return Err("--pid is required".to_owned());
    }
    if !a.addr.ip().is_loopback() {
        return Err(format!("{} is not a loopback address", a.addr));
    }
    if a.secs < 10 || a.header_timeout < Duration::from_millis(200) {
        return Err("--secs must be at least 10 and the header timeout at least 200 ms".to_owned());
    }
    if a.max_body < 64 * 1024 {
        return Err("--max-body must be at least 65536".to_owned());
    }
    Ok(Some(a))
}
