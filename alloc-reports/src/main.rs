//! `cargo run --release -p alloc-reports`: measures every scenario against the built-in
//! subjects (server-demo on each I/O driver `--io` names, and hyper) and writes the report.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::process::ExitCode;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() -> ExitCode {
    alloc_reports::run::main_with(&alloc_reports::subject::builtin())
}
