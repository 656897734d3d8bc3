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
