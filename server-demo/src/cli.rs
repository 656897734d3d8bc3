//! Command-line flags, read with [`lexopt`].
//!
//! lexopt rather than clap: it has no dependencies of its own and compiles in about a second,
//! where clap with its derive macros adds a dozen crates (`syn` among them) to every build of
//! this library and of the crates that link it, on a two-core CI. What clap would add here is
//! a generated `--help` and error wording; a fixed [`USAGE`] text and the few errors below say
//! the same, in this workspace's wording, and stay under test. lexopt does the parsing that is
//! easy to get subtly wrong by hand: `--flag value` and `--flag=value`, `--` ending the flags,
//! a value that is missing at the end, and arguments that are not UTF-8.

use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use lexopt::{Arg, Parser};

use bufslab_server::{Config, Listener, MinBodyRate, TlsConfig};

/// How often `--min-body-rate` is checked: the rate is averaged over this long, so a client
/// that pauses briefly is not cut.
const RATE_CHECK: Duration = Duration::from_secs(5);

/// The usage text printed by `--help` and after a flag error.
pub const USAGE: &str = "\
usage: server-demo [flags]

  --addr ADDR               listen address (default 127.0.0.1:8080); HTTPS with --tls-cert
  --http-addr ADDR          also serve plain HTTP on this address (beside HTTPS on --addr)
  --workers N               worker threads, one SO_REUSEPORT listener each (default: cores)
  --accept-batch N          connections accepted per listener wake-up (default 64; 1 = accept-one)
  --max-conns N             connection slots per worker, preallocated (default 10000)
  --max-head N              largest request head in bytes, 431 beyond (default 16384)
  --max-body N              largest request body in bytes, 413 beyond (default 16777216)
  --header-timeout-ms N     time for a request head to arrive, 408 beyond (default 10000)
  --idle-timeout-ms N       keep-alive idle / no-progress timeout (default 60000)
  --min-body-rate N         slowest request body in bytes a second, checked every 5 s: 408 below
                            (default: none)
  --out-blocks N            output entries queued per connection; half is the largest whole
                            response body, in 4 KiB blocks (default 16)
  --pool-max-bytes N        bound on the buffer pool's memory (default 268435456)
  --pool-prealloc-slabs N   4 KiB-block slabs allocated at start (default 4)
  --pool-strategy S         the pool's shared free list: queue (FIFO) or stack (LIFO) (default queue)
  --io MODE                 I/O driver: auto (io_uring where it works, else epoll), epoll, uring (default auto)
  --tls-cert FILE           serve HTTPS (TLS 1.3 and 1.2) with this PEM certificate chain, leaf first
  --tls-key FILE            ...and this PEM private key (both or neither)
  --tls12 on|off            serve TLS 1.2 clients too (default on); off: protocol_version alert
  --tls-client-ca FILE      require a client certificate issued by a CA in this PEM file
  --tls-record-limit N      records per sending key before a KeyUpdate (default: the suite's
                            limit, 2^24 for AES-GCM; TLS 1.2, which has none, closes there);
                            small values test key updates
  -h, --help                this text
";

/// What the command line asks for.
// Made once per process: the size of `Serve` costs nothing, a box would be noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Command {
    /// Serve with this configuration.
    Serve(Config),
    /// Print the usage text.
    Help,
}

/// A flag the command line got wrong. `main` prints it with [`USAGE`] and exits with status 2.
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
    /// An argument that is not a flag (this program takes none), or the value of a flag that
    /// takes none (`--help=x`).
    UnexpectedArgument(String),
    /// `--tls-cert` without `--tls-key` or the reverse, or a pair that does not load.
    Tls(String),
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
            CliError::UnexpectedArgument(arg) => write!(f, "unexpected argument `{arg}`"),
            CliError::Tls(why) => write!(f, "TLS: {why}"),
        }
    }
}

impl std::error::Error for CliError {}

impl From<lexopt::Error> for CliError {
    fn from(e: lexopt::Error) -> Self {
        match e {
            lexopt::Error::MissingValue { option } => {
                CliError::MissingValue(option.unwrap_or_default())
            }
            lexopt::Error::UnexpectedOption(flag) => CliError::UnknownFlag(flag),
            lexopt::Error::UnexpectedArgument(arg) => {
                CliError::UnexpectedArgument(arg.to_string_lossy().into_owned())
            }
            lexopt::Error::UnexpectedValue { option, value } => {
                CliError::UnexpectedArgument(format!("{option}={}", value.to_string_lossy()))
            }
            // What lexopt reports only from helpers this module does not call.
            other => CliError::UnexpectedArgument(other.to_string()),
        }
    }
}

impl CliError {
    /// The error for an argument that no flag of the program matched: an unknown flag (long
    /// or short), or a value where a flag was expected. For other programs' command lines
    /// read with lexopt too, so that every binary words these errors alike.
    #[must_use]
    pub fn not_expected(arg: Arg<'_>) -> CliError {
        match arg {
            Arg::Long(name) => CliError::UnknownFlag(format!("--{name}")),
            Arg::Short(c) => CliError::UnknownFlag(format!("-{c}")),
            Arg::Value(v) => CliError::UnexpectedArgument(v.to_string_lossy().into_owned()),
        }
    }
}

/// A switch's value: `on` or `off`.
struct OnOff(bool);

impl FromStr for OnOff {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "on" => Ok(OnOff(true)),
            "off" => Ok(OnOff(false)),
            _ => Err(()),
        }
    }
}

/// The value of `flag` (the next argument, or what follows `=`), parsed as `T`.
fn value<T: FromStr>(p: &mut Parser, flag: &str, expected: &'static str) -> Result<T, CliError> {
    let raw: OsString = p.value()?;
    let bad = || CliError::BadValue {
        flag: flag.to_owned(),
        value: raw.to_string_lossy().into_owned(),
        expected,
    };
    raw.to_str().ok_or_else(bad)?.parse().map_err(|_| bad())
}

/// Parses the arguments after the program name. Accepts `--flag value` and `--flag=value`.
///
/// # Examples
///
/// ```
/// use server_demo::{parse_args, CliError, Command};
///
/// let Ok(Command::Serve(config)) = parse_args(["--workers=2".to_owned()]) else {
///     panic!("a valid command line");
/// };
/// assert_eq!(config.workers, 2);
/// assert_eq!(
///     parse_args(["--workers".to_owned()]).unwrap_err().to_string(),
///     "flag `--workers` needs a value"
/// );
/// ```
///
/// # Errors
/// The first bad flag.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Command, CliError> {
    const COUNT: &str = "a whole number";
    let mut cfg = Config::default();
    let (mut tls_cert, mut tls_key) = (None::<PathBuf>, None::<PathBuf>);
    let mut record_limit = None::<u64>;
    let mut tls12 = None::<bool>;
    let mut client_ca = None::<PathBuf>;
    let mut p = Parser::from_args(args);
    while let Some(arg) = p.next()? {
        let f = match arg {
            Arg::Short('h') | Arg::Long("help") => return Ok(Command::Help),
            Arg::Long(name) => name,
            other => return Err(CliError::not_expected(other)),
        };
        let flag = format!("--{f}");
        let f = flag.as_str();
        match f {
            "--addr" => {
                cfg.addr = value::<SocketAddr>(&mut p, f, "an address like 127.0.0.1:8080")?
            }
            "--http-addr" => {
                let addr = value::<SocketAddr>(&mut p, f, "an address like 127.0.0.1:8080")?;
                cfg.listeners.push(Listener::plain(addr));
            }
            "--workers" => cfg.workers = value(&mut p, f, COUNT)?,
            "--accept-batch" => cfg.accept_batch = value(&mut p, f, COUNT)?,
            "--max-conns" => cfg.max_conns = value(&mut p, f, COUNT)?,
            "--max-head" => cfg.max_head = value(&mut p, f, COUNT)?,
            "--max-body" => cfg.max_body = value(&mut p, f, COUNT)?,
            "--header-timeout-ms" => {
                cfg.header_timeout = Duration::from_millis(value(&mut p, f, COUNT)?);
            }
            "--idle-timeout-ms" => {
                cfg.idle_timeout = Duration::from_millis(value(&mut p, f, COUNT)?);
            }
            "--min-body-rate" => {
                let per_sec: u64 = value(&mut p, f, COUNT)?;
                cfg.min_body_rate = Some(MinBodyRate::new(
                    per_sec.saturating_mul(RATE_CHECK.as_secs()),
                    RATE_CHECK,
                ));
            }
            "--out-blocks" => cfg.out_blocks = value(&mut p, f, COUNT)?,
            "--pool-max-bytes" => cfg.pool.max_bytes = value(&mut p, f, COUNT)?,
            "--pool-prealloc-slabs" => cfg.pool.prealloc_slabs = value(&mut p, f, COUNT)?,
            "--pool-strategy" => cfg.pool.strategy = value(&mut p, f, "queue or stack")?,
            "--io" => cfg.io = value(&mut p, f, "auto, epoll or uring")?,
            "--tls-cert" => tls_cert = Some(p.value()?.into()),
            "--tls-key" => tls_key = Some(p.value()?.into()),
            "--tls-record-limit" => record_limit = Some(value(&mut p, f, COUNT)?),
            "--tls12" => tls12 = Some(value::<OnOff>(&mut p, f, "on or off")?.0),
            "--tls-client-ca" => client_ca = Some(p.value()?.into()),
            _ => return Err(CliError::UnknownFlag(flag.clone())),
        }
    }
    cfg.tls = match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => {
            let load = |e: bufslab_tls::LoadError| CliError::Tls(e.to_string());
            let mut builder = bufslab_tls::Config::pem_files_builder(&cert, &key)
                .map_err(load)?
                .tls12(tls12.unwrap_or(true));
            if let Some(ca) = client_ca {
                builder =
                    builder.client_auth(bufslab_tls::client_verifier(&ca, true).map_err(load)?);
            }
            let mut tls = TlsConfig::new(builder.build().map_err(|e| load(e.into()))?);
            tls.record_limit = record_limit;
            Some(tls)
        }
        (None, None) if record_limit.is_none() && tls12.is_none() && client_ca.is_none() => None,
        (None, None) => {
            let why =
                "--tls-record-limit, --tls12 and --tls-client-ca need --tls-cert and --tls-key";
            return Err(CliError::Tls(why.to_owned()));
        }
        _ => {
            let why = "--tls-cert and --tls-key go together";
            return Err(CliError::Tls(why.to_owned()));
        }
    };
    Ok(Command::Serve(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bufslab_server::Strategy;

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
        let Ok(Command::Serve(c)) = parse("--min-body-rate 100 --out-blocks 32") else {
            panic!("should parse");
        };
        assert_eq!(
            c.min_body_rate,
            Some(MinBodyRate::new(500, Duration::from_secs(5)))
        );
        assert_eq!((c.out_blocks, c.whole_body_limit()), (32, 64 * 1024));
        assert!(matches!(parse("--help"), Ok(Command::Help)));
        assert!(matches!(parse("--workers 2 -h"), Ok(Command::Help)));
        assert!(matches!(parse(""), Ok(Command::Serve(_))));
    }

    #[test]
    fn errors_name_the_flag() {
        let err = |s| parse(s).unwrap_err();
        assert_eq!(err("--bogus"), CliError::UnknownFlag("--bogus".into()));
        assert_eq!(err("--bogus=1"), CliError::UnknownFlag("--bogus".into()));
        assert_eq!(err("-x"), CliError::UnknownFlag("-x".into()));
        assert_eq!(err("--workers"), CliError::MissingValue("--workers".into()));
        assert_eq!(
            err("--max-conns lots"),
            CliError::BadValue {
                flag: "--max-conns".into(),
                value: "lots".into(),
                expected: "a whole number"
            }
        );
        assert_eq!(
            err("--max-conns=-1"),
            CliError::BadValue {
                flag: "--max-conns".into(),
                value: "-1".into(),
                expected: "a whole number"
            }
        );
        assert!(matches!(
            err("--pool-strategy lifo"),
            CliError::BadValue {
                expected: "queue or stack",
                ..
            }
        ));
        assert!(matches!(
            err("--io kqueue"),
            CliError::BadValue {
                expected: "auto, epoll or uring",
                ..
            }
        ));
        assert_eq!(err("serve"), CliError::UnexpectedArgument("serve".into()));
        assert_eq!(
            err("-- --workers 2"),
            CliError::UnexpectedArgument("--workers".into())
        );
        assert_eq!(err("--addr").to_string(), "flag `--addr` needs a value");
        assert_eq!(
            err("--addr nowhere").to_string(),
            "flag `--addr`: `nowhere` is not an address like 127.0.0.1:8080"
        );
    }

    #[test]
    fn http_addr_adds_a_plain_listener() {
        let Ok(Command::Serve(c)) = parse("--http-addr 127.0.0.1:8081 --http-addr 127.0.0.1:0")
        else {
            panic!("parses")
        };
        let addrs: Vec<String> = c.listeners.iter().map(|l| l.addr.to_string()).collect();
        assert_eq!(addrs, ["127.0.0.1:8081", "127.0.0.1:0"]);
        assert!(c.listeners.iter().all(|l| l.tls.is_none()));
        assert!(matches!(
            parse("--http-addr x"),
            Err(CliError::BadValue { .. })
        ));
    }

    #[test]
    fn tls_flags_come_in_pairs_and_must_load() {
        assert!(matches!(parse("--tls-cert c.pem"), Err(CliError::Tls(_))));
        assert!(matches!(parse("--tls-key k.pem"), Err(CliError::Tls(_))));
        assert!(matches!(parse("--tls12 off"), Err(CliError::Tls(_))));
        assert!(matches!(
            parse("--tls-client-ca ca.pem"),
            Err(CliError::Tls(_))
        ));
        assert!(matches!(
            parse("--tls12 maybe"),
            Err(CliError::BadValue {
                expected: "on or off",
                ..
            })
        ));
        let Err(CliError::Tls(why)) =
            parse("--tls-cert /nonexistent/c.pem --tls-key /nonexistent/k.pem")
        else {
            panic!("a missing file must be refused");
        };
        assert!(why.contains("/nonexistent/c.pem"), "{why}");
    }

    #[test]
    fn a_key_file_with_no_key_or_another_key_is_named() {
        let dir = std::env::temp_dir().join(format!("server-demo-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let pair = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
        let other = rcgen::KeyPair::generate().expect("key");
        let (cert, key) = (dir.join("cert.pem"), dir.join("other.pem"));
        std::fs::write(&cert, pair.cert.pem()).expect("write");
        std::fs::write(&key, other.serialize_pem()).expect("write");
        let why = |cert: &std::path::Path, key: &std::path::Path| match parse(&format!(
            "--tls-cert {} --tls-key {}",
            cert.display(),
            key.display()
        )) {
            Err(CliError::Tls(why)) => why,
            _ => panic!("{} with {} must be refused", cert.display(), key.display()),
        };
        assert_eq!(
            why(&cert, &key),
            format!(
                "{}: the private key does not match the certificate in {}",
                key.display(),
                cert.display()
            )
        );
        assert_eq!(
            why(&cert, &cert),
            format!("{}: no private key in the file", cert.display())
        );
        // A client CA file with no certificate in it.
        let key = dir.join("key.pem");
        std::fs::write(&key, pair.key_pair.serialize_pem()).expect("write");
        let flags = format!(
            "--tls-cert {} --tls-key {} --tls-client-ca {}",
            cert.display(),
            key.display(),
            key.display()
        );
        let Err(CliError::Tls(why)) = parse(&flags) else {
            panic!("a CA file without a certificate must be refused");
        };
        assert_eq!(
            why,
            format!("{}: no CERTIFICATE section in the file", key.display())
        );
        let flags = format!(
            "--tls-cert {} --tls-key {} --tls-client-ca {}",
            cert.display(),
            key.display(),
            cert.display()
        );
        assert!(matches!(parse(&flags), Ok(Command::Serve(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn usage_lists_every_flag() {
        for flag in [
            "--addr",
            "--http-addr",
            "--workers",
            "--accept-batch",
            "--max-conns",
            "--max-head",
            "--max-body",
            "--header-timeout-ms",
            "--idle-timeout-ms",
            "--min-body-rate",
            "--out-blocks",
            "--pool-max-bytes",
            "--pool-prealloc-slabs",
            "--pool-strategy",
            "--io",
            "--tls-cert",
            "--tls-key",
            "--tls-record-limit",
            "--tls12",
            "--tls-client-ca",
        ] {
            assert!(USAGE.contains(flag), "{flag} missing from USAGE");
            assert!(
                !matches!(parse(flag), Err(CliError::UnknownFlag(_))),
                "{flag} in USAGE but not parsed"
            );
        }
    }
}
