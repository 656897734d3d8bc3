//! Command-line flags, parsed by hand like server-demo's: four flags need no parser crate.

use std::fmt;
use std::path::PathBuf;

use crate::measure::Options;
use crate::scenario::{Scenario, UnknownScenario};

/// The usage text printed by `--help` and after a flag error.
pub const USAGE: &str = "\
usage: alloc-reports [flags]

Runs each scenario against an in-process server-demo with dhat as the global allocator and
reports heap allocations per request.

  --requests N       measured requests per scenario (default: each scenario's own)
  --warmup N         requests before the measured window (default 200)
  --scenario NAME    run only this scenario; repeatable (default: all)
  --out DIR          where the report goes (default: alloc-reports/out)
  -h, --help         this text

scenarios: plaintext json pipelined-16 echo-1k echo-chunked-64k not-found connect-close
           malformed-400 plaintext-queue plaintext-stack
";

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run these scenarios and write the report into `out`.
    Run {
        /// Scenarios, in the order to run them.
        scenarios: Vec<Scenario>,
        /// Requests and warm-up.
        options: Options,
        /// Output directory.
        out: PathBuf,
    },
    /// Print the usage text.
    Help,
}

/// A flag the command line got wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliError {
    /// A flag this program does not know.
    UnknownFlag(String),
    /// A flag given without its value.
    MissingValue(&'static str),
    /// A count that is not a positive integer (or, for `--warmup`, a non-negative one).
    BadCount(&'static str, String),
    /// A scenario name that does not exist.
    Scenario(UnknownScenario),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::UnknownFlag(flag) => write!(f, "unknown flag `{flag}`"),
            CliError::MissingValue(flag) => write!(f, "flag `{flag}` needs a value"),
            CliError::BadCount(flag, value) => {
                write!(f, "flag `{flag}` needs a count, got `{value}`")
            }
            CliError::Scenario(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CliError {}

/// The default output directory: `out/` beside this crate's manifest, wherever cargo runs.
#[must_use]
pub fn default_out() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("out")
}

/// Parses the arguments (without the program name).
///
/// # Errors
/// The first [`CliError`].
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Command, CliError> {
    let mut args = args.into_iter();
    let mut scenarios = Vec::new();
    let mut options = Options::default();
    let mut out = default_out();
    while let Some(flag) = args.next() {
        let mut value = |name: &'static str| args.next().ok_or(CliError::MissingValue(name));
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--requests" => {
                let v = value("--requests")?;
                options.requests = Some(count(&v, "--requests", 1)?);
            }
            "--warmup" => {
                let v = value("--warmup")?;
                options.warmup = count(&v, "--warmup", 0)?;
            }
            "--scenario" => {
                let v = value("--scenario")?;
                let s = Scenario::from_name(&v).map_err(CliError::Scenario)?;
                if !scenarios.contains(&s) {
                    scenarios.push(s);
                }
            }
            "--out" => out = PathBuf::from(value("--out")?),
            _ => return Err(CliError::UnknownFlag(flag)),
        }
    }
    if scenarios.is_empty() {
        scenarios = Scenario::ALL.to_vec();
    }
    Ok(Command::Run {
        scenarios,
        options,
        out,
    })
}

fn count(value: &str, flag: &'static str, min: u64) -> Result<u64, CliError> {
    value
        .parse::<u64>()
        .ok()
        .filter(|&n| n >= min)
        .ok_or_else(|| CliError::BadCount(flag, value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn flags() {
        let cmd = parse(args(
            "--requests 50 --warmup 0 --scenario json --scenario malformed-400 --scenario json --out /tmp/x",
        ))
        .unwrap();
        assert_eq!(
            cmd,
            Command::Run {
                scenarios: vec![Scenario::Json, Scenario::Malformed],
                options: Options {
                    requests: Some(50),
                    warmup: 0
                },
                out: PathBuf::from("/tmp/x"),
            }
        );
        let Command::Run { scenarios, .. } = parse(Vec::new()).unwrap() else {
            panic!("expected a run");
        };
        assert_eq!(scenarios, Scenario::ALL);
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse(args("--requests 0")),
            Err(CliError::BadCount("--requests", "0".to_owned()))
        );
        assert_eq!(
            parse(args("--warmup")),
            Err(CliError::MissingValue("--warmup"))
        );
        assert!(matches!(
            parse(args("--scenario nope")),
            Err(CliError::Scenario(_))
        ));
        assert_eq!(
            parse(args("--bogus")),
            Err(CliError::UnknownFlag("--bogus".to_owned()))
        );
        assert_eq!(parse(args("-h")), Ok(Command::Help));
    }

    #[test]
    fn usage_lists_every_scenario() {
        for s in Scenario::ALL {
            assert!(USAGE.contains(s.name()), "{} missing from USAGE", s.name());
        }
    }
}
