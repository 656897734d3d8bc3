//! `cargo run --release -p alloc-reports`: measures every scenario and writes the report.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use alloc_reports::chart::{self, ChartError};
use alloc_reports::cli::{self, CliError, Command, USAGE};
use alloc_reports::machine::Provenance;
use alloc_reports::measure::{self, MeasureError, Options, Profile, Stage};
use alloc_reports::report::{self, Report, ReportError};
use alloc_reports::Scenario;
use indicatif::{ProgressBar, ProgressStyle};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Why a run failed.
#[derive(Debug)]
enum Error {
    Cli(CliError),
    OutDir(PathBuf, std::io::Error),
    Measure(&'static str, MeasureError),
    Report(ReportError),
    Chart(ChartError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Cli(e) => write!(f, "{e}\n\n{USAGE}"),
            Error::OutDir(dir, e) => write!(f, "cannot create {}: {e}", dir.display()),
            Error::Measure(name, e) => write!(f, "scenario {name}: {e}"),
            Error::Report(e) => e.fmt(f),
            Error::Chart(e) => e.fmt(f),
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cli::parse(args.clone()) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Run {
            scenarios,
            options,
            out,
        }) => match run(&scenarios, options, &out, &args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("alloc-reports: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("alloc-reports: {}", Error::Cli(e));
            ExitCode::from(2)
        }
    }
}

fn run(scenarios: &[Scenario], options: Options, out: &Path, args: &[String]) -> Result<(), Error> {
    std::fs::create_dir_all(out).map_err(|e| Error::OutDir(out.to_path_buf(), e))?;
    let provenance = Provenance::collect(Path::new(env!("CARGO_MANIFEST_DIR")));
    let total: u64 = scenarios
        .iter()
        .map(|&s| {
            let (warm, measured) = measure::planned_writes(s, options);
            (warm + measured) * s.per_write()
        })
        .sum();
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} requests  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // No steady tick: a ticker thread would allocate while it draws, inside the windows.
    let mut measurements = Vec::with_capacity(scenarios.len());
    for &scenario in scenarios {
        bar.set_message(scenario.name());
        let profile = out.join(format!("dhat-{}.json", scenario.name()));
        let profile = Profile::File(&profile);
        let m = measure::run_profiled(
            scenario,
            options,
            profile,
            &mut |stage| match stage {
                Stage::WarmedUp(n) | Stage::Measured(n) => bar.inc(n),
            },
            // dhat reports on stderr as it writes the profile; keep that above the bar.
            |profiler| bar.suspend(|| drop(profiler)),
        )
        .map_err(|e| Error::Measure(scenario.name(), e))?;
        measurements.push(m);
    }
    bar.finish_and_clear();

    let mut command = String::from("cargo run --release -p alloc-reports");
    if !args.is_empty() {
        command.push_str(" --");
        for a in args {
            command.push(' ');
            command.push_str(a);
        }
    }
    let report = Report {
        provenance,
        command,
        scenarios: measurements,
    };
    print!("{}", report::table(&report.scenarios));
    report::write(out, &report).map_err(Error::Report)?;
    chart::draw(&out.join("allocs.svg"), &report.scenarios).map_err(Error::Chart)?;
    println!(
        "\nwrote {}: report.md, report.json, allocs.svg, dhat-<scenario>.json",
        out.display()
    );
    Ok(())
}
