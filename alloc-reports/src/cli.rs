//! Command-line flags, read with [`lexopt`] as server-demo reads its own (its `cli` module
//! says why lexopt rather than clap). A flag that is unknown, lacks its value or is not a flag
//! at all is reported as server-demo reports it, with its [`server_demo::CliError`].

use std::fmt;
use std::path::PathBuf;

use lexopt::{Arg, Parser};
use server_demo::IoMode;

use crate::measure::Options;
use crate::scenario::{Scenario, UnknownScenario};

/// The usage text printed by `--help` and after a flag error.
pub const USAGE: &str = "\
usage: alloc-reports [flags]

Runs each scenario against a fresh server of each subject and reports heap allocations per
request, the subjects side by side: servers in this process counted by dhat, server binaries
counted by a preloaded allocation counter.

  --requests N       measured requests per scenario (default: each scenario's own)
  --warmup N         requests before the measured window (default 200)
  --scenario NAME    run only this scenario; repeatable (default: all); `https` names
                     every HTTPS scenario
  --subject NAME     measure only this server; repeatable (default: all); `server-demo`
                     names server-demo under each driver that --io keeps
  --io MODE          server-demo's I/O driver: epoll, uring or auto; repeatable, one
                     subject each (default: epoll and uring). Where io_uring is refused,
                     server-demo-uring is skipped with the reason
  --process NAME=CMD a server binary of your own, as subject NAME: CMD is its command line,
                     split on whitespace, with {port} where it must listen on 127.0.0.1
                     (e.g. 'mine=target/release/mine --listen 127.0.0.1:{port}'); repeatable
  --out DIR          where the report goes (default: alloc-reports/out)
  -h, --help         this text

scenarios: plaintext json pipelined-16 echo-1k echo-chunked-64k not-found connect-close
           malformed-400 plaintext-queue plaintext-stack
           HTTPS (TLS 1.3, the client offering one suite: -aes128 TLS_AES_128_GCM_SHA256,
           -aes256 TLS_AES_256_GCM_SHA384, -chacha20 TLS_CHACHA20_POLY1305_SHA256; server
           binaries only): https-plaintext-aes128 https-plaintext-aes256
           https-plaintext-chacha20 https-json-aes128 https-json-aes256 https-json-chacha20
           https-pipelined-16-aes128 https-pipelined-16-aes256 https-pipelined-16-chacha20
           https-echo-1k-aes128 https-echo-1k-aes256 https-echo-1k-chacha20
           https-echo-chunked-64k-aes128 https-echo-chunked-64k-aes256
           https-echo-chunked-64k-chacha20 (keep-alive, one handshake before warm-up)
           https-full-handshake-aes128 https-full-handshake-aes256
           https-full-handshake-chacha20 (a full handshake per connection)
           https-resumed-handshake-aes128 https-resumed-handshake-aes256
           https-resumed-handshake-chacha20 (each connection resumed by ticket)
           WebSocket (a request is a message and its echo): ws-echo-32 ws-echo-4k ws-echo-64k
           (binary messages) ws-text-32 ws-text-4k ws-text-64k (text messages)
subjects (built in), in process: server-demo-epoll server-demo-uring server-demo-auto hyper
           ws-tungstenite ws-fastwebsockets (WebSocket scenarios only)
           as binaries: server-demo-bin-epoll server-demo-bin-uring server-demo-bin-auto
           hyper-bin may-minihttp-bin nginx (where installed)
           bufslab-ws-bin-epoll bufslab-ws-bin-uring (bufslab-server's ws_echo example;
           --io keeps them as it keeps server-demo's) ws-tungstenite-bin ws-fastwebsockets-bin
           (WebSocket scenarios only)
";

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run these scenarios against these subjects and write the report into `out`.
    Run {
        /// Scenarios, in the order to run them.
        scenarios: Vec<Scenario>,
        /// Subject names, in the order given; empty: every subject.
        subjects: Vec<String>,
        /// The I/O modes whose server-demo subjects run, in the order given.
        io: Vec<IoMode>,
        /// `--process` subjects, `NAME=COMMAND` each, in the order given.
        processes: Vec<String>,
        /// Requests and warm-up.
        options: Options,
        /// Output directory.
        out: PathBuf,
    },
    /// Print the usage text.
    Help,
}

/// A flag the command line got wrong. The binary prints it with [`USAGE`] and exits with
/// status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliError {
    /// An unknown flag, a flag without its value, or an argument that is not a flag.
    Syntax(server_demo::CliError),
    /// A count that is not a positive integer (or, for `--warmup`, a non-negative one).
    BadCount(&'static str, String),
    /// A value that is not UTF-8 text.
    NotText(&'static str),
    /// A scenario name that does not exist.
    Scenario(UnknownScenario),
    /// A subject name that is not among the run's subjects; holds the known ones.
    Subject(String, Vec<String>),
    /// An `--io` value that is not an I/O mode.
    Io(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Syntax(e) => e.fmt(f),
            CliError::BadCount(flag, value) => {
                write!(f, "flag `{flag}` needs a count, got `{value}`")
            }
            CliError::NotText(flag) => write!(f, "flag `{flag}`: the value is not UTF-8"),
            CliError::Scenario(e) => e.fmt(f),
            CliError::Subject(name, known) => {
                write!(f, "unknown subject `{name}` (known: {})", known.join(" "))
            }
            CliError::Io(value) => {
                write!(f, "flag `--io` takes epoll, uring or auto, got `{value}`")
            }
        }
    }
}

impl std::error::Error for CliError {}

impl From<lexopt::Error> for CliError {
    fn from(e: lexopt::Error) -> Self {
        CliError::Syntax(e.into())
    }
}

impl From<server_demo::CliError> for CliError {
    fn from(e: server_demo::CliError) -> Self {
        CliError::Syntax(e)
    }
}

/// The I/O modes measured when `--io` is not given: both drivers, side by side.
pub const DEFAULT_IO: [IoMode; 2] = [IoMode::Epoll, IoMode::Uring];

/// The default output directory: `out/` beside this crate's manifest, wherever cargo runs.
#[must_use]
pub fn default_out() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("out")
}

/// Parses the arguments (without the program name). Subject names are checked by the caller,
/// which knows the subjects ([`crate::run::main_with`]).
///
/// # Errors
/// The first [`CliError`].
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Command, CliError> {
    let mut p = Parser::from_args(args);
    let mut scenarios = Vec::new();
    let mut subjects = Vec::new();
    let mut io = Vec::new();
    let mut processes = Vec::new();
    let mut options = Options::default();
    let mut out = default_out();
    while let Some(arg) = p.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => return Ok(Command::Help),
            Arg::Long("requests") => {
                options.requests = Some(count(&mut p, "--requests", 1)?);
            }
            Arg::Long("warmup") => options.warmup = count(&mut p, "--warmup", 0)?,
            Arg::Long("scenario") => {
                let v = text(&mut p, "--scenario")?;
                let named = match v.as_str() {
                    "https" => Scenario::HTTPS.to_vec(),
                    _ => vec![Scenario::from_name(&v).map_err(CliError::Scenario)?],
                };
                for s in named {
                    if !scenarios.contains(&s) {
                        scenarios.push(s);
                    }
                }
            }
            Arg::Long("subject") => {
                let v = text(&mut p, "--subject")?;
                if !subjects.contains(&v) {
                    subjects.push(v);
                }
            }
            Arg::Long("io") => {
                let v = text(&mut p, "--io")?;
                let mode = v.parse::<IoMode>().map_err(|()| CliError::Io(v))?;
                if !io.contains(&mode) {
                    io.push(mode);
                }
            }
            Arg::Long("process") => processes.push(text(&mut p, "--process")?),
            Arg::Long("out") => out = PathBuf::from(p.value()?),
            other => return Err(server_demo::CliError::not_expected(other).into()),
        }
    }
    if scenarios.is_empty() {
        scenarios = Scenario::ALL.to_vec();
    }
    if io.is_empty() {
        io = DEFAULT_IO.to_vec();
    }
    Ok(Command::Run {
        scenarios,
        subjects,
        io,
        processes,
        options,
        out,
    })
}

/// The value of `flag` as text.
fn text(p: &mut Parser, flag: &'static str) -> Result<String, CliError> {
    p.value()?
        .into_string()
        .map_err(|_| CliError::NotText(flag))
}

/// The value of `flag` as a count of at least `min`.
fn count(p: &mut Parser, flag: &'static str, min: u64) -> Result<u64, CliError> {
    let value = text(p, flag)?;
    value
        .parse::<u64>()
        .ok()
        .filter(|&n| n >= min)
        .ok_or(CliError::BadCount(flag, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use server_demo::CliError as Syntax;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn flags() {
        let cmd = parse(args(
            "--requests 50 --warmup=0 --scenario json --scenario malformed-400 --scenario json \
             --subject hyper --subject hyper --io uring --io=auto --io uring --out /tmp/x \
             --process mine=./srv:{port}",
        ))
        .unwrap();
        assert_eq!(
            cmd,
            Command::Run {
                scenarios: vec![Scenario::Json, Scenario::Malformed],
                subjects: vec!["hyper".to_owned()],
                io: vec![IoMode::Uring, IoMode::Auto],
                processes: vec!["mine=./srv:{port}".to_owned()],
                options: Options {
                    requests: Some(50),
                    warmup: 0
                },
                out: PathBuf::from("/tmp/x"),
            }
        );
        let Command::Run {
            scenarios,
            subjects,
            io,
            ..
        } = parse(Vec::new()).unwrap()
        else {
            panic!("expected a run");
        };
        assert_eq!(scenarios, Scenario::ALL);
        assert!(subjects.is_empty());
        let Command::Run { scenarios, .. } = parse(args(
            "--scenario https-json-aes256 --scenario https --scenario json",
        ))
        .unwrap() else {
            panic!("expected a run");
        };
        let mut https = Scenario::HTTPS.to_vec();
        let json = https.remove(4);
        assert_eq!(json.name(), "https-json-aes256");
        assert_eq!(scenarios[0], json);
        assert_eq!(scenarios[1..21], https);
        assert_eq!(scenarios[21..], [Scenario::Json]);
        assert_eq!(io, [IoMode::Epoll, IoMode::Uring]);
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse(args("--requests 0")),
            Err(CliError::BadCount("--requests", "0".to_owned()))
        );
        assert_eq!(
            parse(args("--requests=-5")),
            Err(CliError::BadCount("--requests", "-5".to_owned()))
        );
        assert_eq!(
            parse(args("--warmup")),
            Err(CliError::Syntax(Syntax::MissingValue(
                "--warmup".to_owned()
            )))
        );
        assert!(matches!(
            parse(args("--scenario nope")),
            Err(CliError::Scenario(_))
        ));
        assert_eq!(
            parse(args("--bogus")),
            Err(CliError::Syntax(Syntax::UnknownFlag("--bogus".to_owned())))
        );
        assert_eq!(
            parse(args("-q")),
            Err(CliError::Syntax(Syntax::UnknownFlag("-q".to_owned())))
        );
        assert_eq!(
            parse(args("json")),
            Err(CliError::Syntax(Syntax::UnexpectedArgument(
                "json".to_owned()
            )))
        );
        assert_eq!(
            parse(args("--io kqueue")),
            Err(CliError::Io("kqueue".to_owned()))
        );
        assert_eq!(
            parse(args("--io EPOLL")).unwrap_err().to_string(),
            "flag `--io` takes epoll, uring or auto, got `EPOLL`"
        );
        assert_eq!(
            parse(args("--io")),
            Err(CliError::Syntax(Syntax::MissingValue("--io".to_owned())))
        );
        assert_eq!(parse(args("-h")), Ok(Command::Help));
        assert_eq!(parse(args("--requests 5 --help")), Ok(Command::Help));
        assert_eq!(
            parse(args("--warmup x")).unwrap_err().to_string(),
            "flag `--warmup` needs a count, got `x`"
        );
    }

    #[test]
    fn usage_lists_every_scenario_and_subject() {
        for s in Scenario::ALL {
            assert!(USAGE.contains(s.name()), "{} missing from USAGE", s.name());
        }
        for s in crate::subject::builtin() {
            assert!(USAGE.contains(s.name()), "{} missing from USAGE", s.name());
        }
        for mode in [IoMode::Epoll, IoMode::Uring, IoMode::Auto] {
            assert!(
                USAGE.contains(mode.name()),
                "{} missing from USAGE",
                mode.name()
            );
        }
    }
}
