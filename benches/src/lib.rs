//! Side-by-side benchmarks of the bufslab family. See `BENCHMARKS.md` at the workspace root.

use std::fmt::Display;
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
