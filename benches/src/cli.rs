//! The binaries' command lines: `--flag value` pairs read with [`lexopt`], and the start of
//! `main` that prints the usage or the error.
//!
//! lexopt rather than clap, as in server-demo (whose `cli` module argues it): no dependencies,
//! about a second to compile, and the binaries keep their own usage texts and error wording.

use std::fmt::Display;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;

/// The start of `main` in this crate's binaries: the parsed arguments, or the exit code once
/// the usage was printed (`Ok(None)`, i.e. `--help`: success) or the error and the usage were
/// (status 2).
pub fn args_or_exit<A, E: Display>(
    program: &str,
    usage: &str,
    parsed: Result<Option<A>, E>,
) -> Result<A, ExitCode> {
    match parsed {
        Ok(Some(args)) => Ok(args),
        Ok(None) => {
            print!("{usage}");
            Err(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{program}: {e}\n\n{usage}");
            Err(ExitCode::from(2))
        }
    }
}

/// `main` of a server binary: parses the command line with `parse`, then runs `run` and turns
/// its error into a message and status 1.
pub fn serve_main<A, E: Display>(
    program: &str,
    usage: &str,
    parse: impl FnOnce(std::iter::Skip<std::env::Args>) -> Result<Option<A>, E>,
    run: impl FnOnce(&A) -> std::io::Result<()>,
) -> ExitCode {
    let args = match args_or_exit(program, usage, parse(std::env::args().skip(1))) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Walks a command line of `--flag value` / `--flag=value` pairs with [`lexopt`], handing each
/// flag to `on`; `Ok(None)` as soon as `-h` or `--help` comes, so the caller prints its usage.
/// The binaries' command lines are this plus a `match` on [`Flag::name`].
///
/// # Examples
///
/// ```
/// let mut workers = 1;
/// let args = ["--workers=4".to_owned()];
/// let parsed = bufslab_benches::parse_flags(args, |f| {
///     match f.name() {
///         "--workers" => workers = f.parse("a number")?,
///         _ => return Err(f.unknown()),
///     }
///     Ok(())
/// });
/// assert_eq!(parsed, Ok(Some(())));
/// assert_eq!(workers, 4);
/// ```
///
/// # Errors
/// The first error `on` returns (a missing or bad value, an unknown flag), or an argument that
/// is not a flag.
pub fn parse_flags<I: IntoIterator<Item = String>>(
    args: I,
    mut on: impl FnMut(&mut Flag<'_>) -> Result<(), String>,
) -> Result<Option<()>, String> {
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        let name = match arg {
            lexopt::Arg::Short('h') | lexopt::Arg::Long("help") => return Ok(None),
            lexopt::Arg::Short(c) => format!("-{c}"),
            lexopt::Arg::Long(l) => format!("--{l}"),
            lexopt::Arg::Value(v) => {
                return Err(format!("unexpected argument `{}`", v.to_string_lossy()))
            }
        };
        on(&mut Flag {
            name,
            parser: &mut parser,
        })?;
    }
    Ok(Some(()))
}

/// One flag of a command line (see [`parse_flags`]). Its value is taken only when asked for, so
/// an unknown flag is reported as unknown, not as missing its value.
pub struct Flag<'a> {
    name: String,
    parser: &'a mut lexopt::Parser,
}

impl Flag<'_> {
    /// The flag as written, without an `=value`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The flag's value: after `=`, or the next argument.
    ///
    /// # Errors
    /// When there is none, or it is not UTF-8.
    pub fn value(&mut self) -> Result<String, String> {
        let v = self
            .parser
            .value()
            .map_err(|_| format!("flag `{}` needs a value", self.name))?;
        v.into_string()
            .map_err(|v| self.bad(&v.to_string_lossy(), "UTF-8 text"))
    }

    /// The value parsed as `T`; `what` names what it should be, for the error.
    ///
    /// # Errors
    /// When there is no value, or it does not parse.
    pub fn parse<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, String> {
        let v = self.value()?;
        v.parse().map_err(|_| self.bad(&v, what))
    }

    /// The error for a value `v` that is not `what`.
    #[must_use]
    pub fn bad(&self, v: &str, what: &str) -> String {
        format!("flag `{}`: `{v}` is not {what}", self.name)
    }

    /// The error for a flag the binary does not know.
    #[must_use]
    pub fn unknown(&self) -> String {
        format!("unknown flag `{}`", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags of a binary with `--addr` and `--workers`, as the binaries parse theirs.
    fn parse(line: &str) -> Result<Option<(String, usize)>, String> {
        let (mut addr, mut workers) = (String::new(), 1);
        let parsed = parse_flags(line.split_whitespace().map(str::to_owned), |f| {
            match f.name() {
                "--addr" => addr = f.value()?,
                "--workers" => workers = f.parse("a number")?,
                _ => return Err(f.unknown()),
            }
            Ok(())
        })?;
        Ok(parsed.map(|()| (addr, workers)))
    }

    #[test]
    fn flags_and_help() {
        assert_eq!(parse("--addr a:1 --workers=3"), Ok(Some(("a:1".into(), 3))));
        assert_eq!(parse(""), Ok(Some((String::new(), 1))));
        assert_eq!(parse("--workers 2 --help"), Ok(None));
        assert_eq!(parse("-h --bogus"), Ok(None));
    }

    #[test]
    fn errors_name_the_flag() {
        assert_eq!(parse("--bogus 1"), Err("unknown flag `--bogus`".into()));
        assert_eq!(parse("-x"), Err("unknown flag `-x`".into()));
        assert_eq!(
            parse("--workers"),
            Err("flag `--workers` needs a value".into())
        );
        assert_eq!(
            parse("--workers=many"),
            Err("flag `--workers`: `many` is not a number".into())
        );
        assert_eq!(parse("extra"), Err("unexpected argument `extra`".into()));
    }

    #[test]
    fn exit_codes() {
        let usage = "usage: x\n";
        assert_eq!(args_or_exit("x", usage, Ok::<_, String>(Some(7))), Ok(7));
        assert_eq!(
            args_or_exit::<u8, String>("x", usage, Ok(None)),
            Err(ExitCode::SUCCESS)
        );
        assert_eq!(
            args_or_exit::<u8, _>("x", usage, Err("bad")),
            Err(ExitCode::from(2))
        );
    }
}

/// The command line of the peer servers that listen like server-demo: `--addr ADDR`, `--port N`
/// (for `--addr 127.0.0.1:N`) and `--workers N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerArgs {
    /// Listen address (default 127.0.0.1:8080; port 0: any free port).
    pub addr: SocketAddr,
    /// Worker threads.
    pub workers: usize,
}

impl ServerArgs {
    /// Parses `args` with [`parse_flags`]; `Ok(None)` for `--help`. `workers` is the default
    /// worker count.
    ///
    /// # Errors
    /// A missing or bad value, an unknown flag, or an argument that is not a flag.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_benches::ServerArgs;
    ///
    /// let args = ["--port", "0", "--workers", "2"].map(String::from);
    /// let parsed = ServerArgs::parse(args, 1).unwrap().unwrap();
    /// assert_eq!((parsed.addr.port(), parsed.workers), (0, 2));
    /// ```
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        workers: usize,
    ) -> Result<Option<ServerArgs>, String> {
        Self::parse_with(args, workers, |f| Err(f.unknown()))
    }

    /// As [`ServerArgs::parse`], handing the flags it does not know to `other` (a binary's own
    /// flags), which returns [`Flag::unknown`] for those it does not know either.
    ///
    /// # Errors
    /// A missing or bad value, an unknown flag, or an argument that is not a flag.
    pub fn parse_with(
        args: impl IntoIterator<Item = String>,
        workers: usize,
        mut other: impl FnMut(&mut Flag<'_>) -> Result<(), String>,
    ) -> Result<Option<ServerArgs>, String> {
        let mut parsed = ServerArgs {
            addr: ([127, 0, 0, 1], 8080).into(),
            workers,
        };
        let done = parse_flags(args, |f| {
            match f.name() {
                "--addr" => parsed.addr = f.parse("an address like 127.0.0.1:8080")?,
                "--port" => {
                    parsed.addr = ([127, 0, 0, 1], f.parse::<u16>("a port number")?).into();
                }
                "--workers" => parsed.workers = f.parse::<NonZeroUsize>("a positive number")?.get(),
                _ => other(f)?,
            }
            Ok(())
        })?;
        Ok(done.map(|()| parsed))
    }
}
