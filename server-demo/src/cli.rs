//! Command-line flags, parsed by hand: a dozen numeric flags do not need a parser crate.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use crate::config::Config;

/// The usage text printed by `--help` and after a flag error.
pub const USAGE: &str = "\
usage: server-demo [flags]

  --addr ADDR               listen address (default 127.0.0.1:8080)
  --workers N               worker threads, one SO_REUSEPORT listener each (default: cores)
  --accept-batch N          connections accepted per listener wake-up (default 64; 1 = accept-one)
  --max-conns N             connection slots per worker, preallocated (default 10000)
  --max-head N              largest request head in bytes, 431 beyond (default 16384)
  --max-body N              largest request body in bytes, 413 beyond (default 16777216)
  --header-timeout-ms N     time for a request head to arrive, 408 beyond (default 10000)
  --idle-timeout-ms N       keep-alive idle / no-progress timeout (default 60000)
  --pool-max-bytes N        bound on the buffer pool's memory (default 268435456)
  --pool-prealloc-slabs N   4 KiB-block slabs allocated at start (default 4)
  --pool-strategy S         the pool's shared free list: queue (FIFO) or stack (LIFO) (default queue)
  -h, --help                this text
";

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// Serve with this configuration.
    Serve(Config),
    /// Print the usage text.
    Help,
}

/// A flag the command line got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// A flag this program does not know.
    UnknownFlag(String),
    /// A flag given without its value.
    MissingValue(String),
    /// A value that does not parse as what the flag needs.
    BadValue {
        /// The flag.
        flag: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::UnknownFlag(flag) => write!(f, "unknown flag `{flag}`"),
            CliError::MissingValue(flag) => write!(f, "flag `{flag}` needs a value"),
            CliError::BadValue {
                flag,
                value,
                expected,
            } => write!(f, "flag `{flag}`: `{value}` is not {expected}"),
        }
    }
}

impl std::error::Error for CliError {}

fn value<T: FromStr>(flag: &str, v: &str, expected: &'static str) -> Result<T, CliError> {
    v.parse().map_err(|_| CliError::BadValue {
        flag: flag.to_owned(),
        value: v.to_owned(),
        expected,
    })
}

/// Parses the arguments after the program name. Accepts `--flag value` and `--flag=value`.
///
/// # Errors
/// The first bad flag.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Command, CliError> {
    let mut cfg = Config::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(Command::Help);
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let known = [
            "--addr",
            "--workers",
            "--accept-batch",
            "--max-conns",
            "--max-head",
            "--max-body",
            "--header-timeout-ms",
            "--idle-timeout-ms",
            "--pool-max-bytes",
            "--pool-prealloc-slabs",
            "--pool-strategy",
        ];
        if !known.contains(&flag.as_str()) {
            return Err(CliError::UnknownFlag(arg));
        }
        let v = match inline {
            Some(v) => v,
            None => args
                .next()
                .ok_or_else(|| CliError::MissingValue(flag.clone()))?,
        };
        const COUNT: &str = "a whole number";
        match flag.as_str() {
            "--addr" => {
                cfg.addr = value::<SocketAddr>(&flag, &v, "an address like 127.0.0.1:8080")?;
            }
            "--workers" => cfg.workers = value(&flag, &v, COUNT)?,
            "--accept-batch" => cfg.accept_batch = value(&flag, &v, COUNT)?,
            "--max-conns" => cfg.max_conns = value(&flag, &v, COUNT)?,
            "--max-head" => cfg.max_head = value(&flag, &v, COUNT)?,
            "--max-body" => cfg.max_body = value(&flag, &v, COUNT)?,
            "--header-timeout-ms" => {
                cfg.header_timeout = Duration::from_millis(value(&flag, &v, COUNT)?);
            }
            "--idle-timeout-ms" => {
                cfg.idle_timeout = Duration::from_millis(value(&flag, &v, COUNT)?);
            }
            "--pool-max-bytes" => cfg.pool.max_bytes = value(&flag, &v, COUNT)?,
            "--pool-prealloc-slabs" => cfg.pool.prealloc_slabs = value(&flag, &v, COUNT)?,
            "--pool-strategy" => cfg.pool.strategy = value(&flag, &v, "queue or stack")?,
            _ => return Err(CliError::UnknownFlag(arg)),
        }
    }
    Ok(Command::Serve(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Strategy;

    fn parse(s: &str) -> Result<Command, CliError> {
        parse_args(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn flags() {
        let Ok(Command::Serve(c)) =
            parse("--workers 3 --accept-batch=1 --addr 0.0.0.0:9000 --idle-timeout-ms 50 --pool-strategy stack")
        else {
            panic!("should parse");
        };
        assert_eq!((c.workers, c.accept_batch), (3, 1));
        assert_eq!(c.pool.strategy, Strategy::Stack);
        assert_eq!(c.addr.port(), 9000);
        assert_eq!(c.idle_timeout, Duration::from_millis(50));
        assert!(matches!(parse("--help"), Ok(Command::Help)));
        assert_eq!(
            parse("--bogus").unwrap_err(),
            CliError::UnknownFlag("--bogus".into())
        );
        assert_eq!(
            parse("--workers").unwrap_err(),
            CliError::MissingValue("--workers".into())
        );
        assert!(matches!(
            parse("--max-conns lots"),
            Err(CliError::BadValue { .. })
        ));
        assert!(matches!(
            parse("--pool-strategy lifo"),
            Err(CliError::BadValue { .. })
        ));
    }
}
