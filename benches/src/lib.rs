//! Side-by-side benchmarks of the bufslab family. See `BENCHMARKS.md` at the workspace root.

use std::fmt::Display;
use std::process::ExitCode;

mod field_sum;

pub use field_sum::{sum_bufslab, FieldSum};

/// The codec fixtures, the project's reference request bytes (`http-codec/tests/fixtures/`):
/// name and bytes, one request head each (`post_json` with its body after it).
pub const FIXTURES: [(&str, &[u8]); 4] = [
    (
        "techempower",
        include_bytes!("../../http-codec/tests/fixtures/techempower.http"),
    ),
    (
        "browser",
        include_bytes!("../../http-codec/tests/fixtures/browser.http"),
    ),
    (
        "many_headers",
        include_bytes!("../../http-codec/tests/fixtures/many_headers.http"),
    ),
    (
        "post_json",
        include_bytes!("../../http-codec/tests/fixtures/post_json.http"),
    ),
];

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

/// Walks a command line of `--flag value` / `--flag=value` pairs, handing each flag to `on`;
/// `Ok(None)` as soon as `-h` or `--help` comes, so the caller prints its usage. The binaries'
/// flag loops are this plus a `match` on [`Flag::name`].
///
/// # Errors
/// The first error `on` returns (a missing or bad value, an unknown flag).
pub fn parse_flags<I: Iterator<Item = String>>(
    mut args: I,
    mut on: impl FnMut(&mut Flag<'_, I>) -> Result<(), String>,
) -> Result<Option<()>, String> {
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg, None),
        };
        if name == "-h" || name == "--help" {
            return Ok(None);
        }
        on(&mut Flag {
            name,
            inline,
            rest: &mut args,
        })?;
    }
    Ok(Some(()))
}

/// One flag of a command line (see [`parse_flags`]). Its value is taken only when asked for, so
/// an unknown flag is reported as unknown, not as missing its value.
pub struct Flag<'a, I> {
    name: String,
    inline: Option<String>,
    rest: &'a mut I,
}

impl<I: Iterator<Item = String>> Flag<'_, I> {
    /// The flag as written, without an `=value`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The flag's value: after `=`, or the next argument.
    ///
    /// # Errors
    /// When there is none.
    pub fn value(&mut self) -> Result<String, String> {
        self.inline
            .take()
            .or_else(|| self.rest.next())
            .ok_or_else(|| format!("flag `{}` needs a value", self.name))
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
    pub fn bad(&self, v: &str, what: &str) -> String {
        format!("flag `{}`: `{v}` is not {what}", self.name)
    }

    /// The error for a flag the binary does not know.
    pub fn unknown(&self) -> String {
        format!("unknown flag `{}`", self.name)
    }
}

/// Why a response is not the `200` with a `Content-Length` that the benches' clients expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseError {
    /// The head is not ASCII text.
    NotText,
    /// The status line is not `HTTP/1.1 200`; holds the status code as sent.
    Status(String),
    /// The head has no (valid) `Content-Length`.
    NoLength,
}

impl Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseError::NotText => write!(f, "response head is not text"),
            ResponseError::Status(s) => write!(f, "status {s}, expected 200"),
            ResponseError::NoLength => write!(f, "response without a Content-Length"),
        }
    }
}

impl std::error::Error for ResponseError {}

/// The whole length (head plus `Content-Length` body) of the `200` response that starts `buf`,
/// or `Ok(None)` while its head is incomplete.
///
/// # Errors
/// When the head is complete but not a `200` with a `Content-Length`.
pub fn response_len(buf: &[u8]) -> Result<Option<usize>, ResponseError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head_len = end + 4;
    let head = std::str::from_utf8(&buf[..head_len]).map_err(|_| ResponseError::NotText)?;
    let status = head.split(' ').nth(1).unwrap_or("");
    if !head.starts_with("HTTP/1.1 ") || status != "200" {
        return Err(ResponseError::Status(status.to_owned()));
    }
    let body_len = head
        .split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .ok_or(ResponseError::NoLength)?;
    Ok(Some(head_len + body_len))
}
