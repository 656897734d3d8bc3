//! The binary's whole run, for any set of subjects: parse the command line, measure every
//! scenario against every subject it applies to (side by side: a scenario's subjects one after
//! another), and write the report, the profiles and the chart.
//!
//! The `alloc-reports` binary is [`main_with`] over [`subject::builtin`](crate::subject::builtin);
//! a binary of one's own with more subjects is the same call over a longer list (see
//! [`crate::subject`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use server_demo::IoMode;

use crate::chart::{self, ChartError};
use crate::cli::{self, CliError, Command, USAGE};
use crate::machine::Provenance;
use crate::measure::{self, MeasureError, Method, Options, Profile, Stage};
use crate::report::{self, Report, ReportError, Skipped};
use crate::scenario::Scenario;
use crate::subject::{answers_to, valid_name, Process, Subject};

/// Why a run failed.
#[derive(Debug)]
enum Error {
    Cli(CliError),
    BadSubjectName(String),
    BadProcess(String),
    OutDir(PathBuf, std::io::Error),
    Measure(String, &'static str, MeasureError),
    Report(ReportError),
    Chart(ChartError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Cli(e) => write!(f, "{e}\n\n{USAGE}"),
            Error::BadSubjectName(name) => write!(
                f,
                "subject name `{name}`: use lowercase letters, digits and `-`, each name once"
            ),
            Error::BadProcess(reason) => write!(f, "flag `--process`: {reason}"),
            Error::OutDir(dir, e) => write!(f, "cannot create {}: {e}", dir.display()),
            Error::Measure(subject, scenario, e) => write!(f, "{subject}, {scenario}: {e}"),
            Error::Report(e) => e.fmt(f),
            Error::Chart(e) => e.fmt(f),
        }
    }
}

/// `main` of a binary that measures `subjects`: reads the command line, runs, and returns the
/// exit status: 0 done, 1 a measurement or a file failed, 2 a bad command line. dhat must be
/// that binary's global allocator.
#[must_use]
pub fn main_with(subjects: &[Box<dyn Subject>]) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cli::parse(args.clone()) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Run {
            scenarios,
            subjects: names,
            io,
            processes,
            options,
            out,
        }) => {
            let extra = match processes
                .iter()
                .map(|spec| Process::from_spec(spec).map_err(Error::BadProcess))
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(extra) => extra,
                Err(e) => {
                    eprintln!("alloc-reports: {e}");
                    return ExitCode::from(2);
                }
            };
            let all: Vec<&dyn Subject> = subjects
                .iter()
                .map(AsRef::as_ref)
                .chain(extra.iter().map(|p| p as &dyn Subject))
                .collect();
            let chosen = match choose(&all, &names, &io) {
                Ok(chosen) => chosen,
                Err(e) => {
                    eprintln!("alloc-reports: {e}");
                    return ExitCode::from(2);
                }
            };
            match run(&chosen, &scenarios, options, &out, &args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("alloc-reports: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("alloc-reports: {}", Error::Cli(e));
            ExitCode::from(2)
        }
    }
}

/// The subjects to run, in the order of `subjects` (the report's order), once their names
/// are checked: those `names` asks for (all of them when `names` is empty), of which a
/// subject with an I/O mode only where `io` has its mode, unless a name gives it whole
/// (`server-demo-auto` runs with any `--io`; `server-demo` is each variant that `io` keeps).
fn choose<'a>(
    subjects: &[&'a dyn Subject],
    names: &[String],
    io: &[IoMode],
) -> Result<Vec<&'a dyn Subject>, Error> {
    for (i, s) in subjects.iter().enumerate() {
        let name = s.name();
        if !valid_name(name) || subjects[..i].iter().any(|t| t.name() == name) {
            return Err(Error::BadSubjectName(name.to_owned()));
        }
    }
    if let Some(name) = names
        .iter()
        .find(|name| !subjects.iter().any(|s| answers_to(*s, name)))
    {
        let known = subjects.iter().map(|s| s.name().to_owned()).collect();
        return Err(Error::Cli(CliError::Subject(name.clone(), known)));
    }
    let io_kept = |s: &dyn Subject| s.io().map_or(true, |mode| io.contains(&mode));
    let chosen = subjects
        .iter()
        .copied()
        .filter(|&s| {
            if names.is_empty() {
                io_kept(s)
            } else {
                names.iter().any(|n| n == s.name())
                    || (io_kept(s) && names.iter().any(|n| answers_to(s, n)))
            }
        })
        .collect();
    Ok(chosen)
}

fn run(
    subjects: &[&dyn Subject],
    scenarios: &[Scenario],
    options: Options,
    out: &Path,
    args: &[String],
) -> Result<(), Error> {
    std::fs::create_dir_all(out).map_err(|e| Error::OutDir(out.to_path_buf(), e))?;
    let provenance = Provenance::collect(Path::new(env!("CARGO_MANIFEST_DIR")));
    let mut skipped = Vec::new();
    let subjects: Vec<&dyn Subject> = subjects
        .iter()
        .copied()
        .filter(|s| match s.unavailable() {
            None => true,
            Some(reason) => {
                eprintln!("alloc-reports: {}: skipped: {reason}", s.name());
                skipped.push(Skipped {
                    subject: s.name().to_owned(),
                    reason,
                });
                false
            }
        })
        .collect();
    let runs: Vec<(&dyn Subject, Scenario)> = scenarios
        .iter()
        .flat_map(|&scenario| {
            subjects
                .iter()
                .filter(move |s| s.applies_to(scenario))
                .map(move |&s| (s, scenario))
        })
        .collect();
    let total: u64 = runs
        .iter()
        .map(|&(_, s)| {
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
    let mut measurements = Vec::with_capacity(runs.len());
    for (subject, scenario) in runs {
        bar.set_message(format!("{} {}", subject.name(), scenario.name()));
        let profile_path = out.join(format!("dhat-{}-{}.json", subject.name(), scenario.name()));
        // A subject in another process has no dhat profile: this process's would be the client's.
        let profile = match subject.method() {
            Method::Dhat => Profile::File(&profile_path),
            Method::Preload => Profile::Testing,
        };
        let m = measure::run_profiled(
            subject,
            scenario,
            options,
            profile,
            &mut |stage| match stage {
                Stage::WarmedUp(n) | Stage::Measured(n) => bar.inc(n),
            },
            // dhat reports on stderr as it writes the profile; keep that above the bar.
            |profiler| bar.suspend(|| drop(profiler)),
        )
        .map_err(|e| Error::Measure(subject.name().to_owned(), scenario.name(), e))?;
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
        subjects: subjects.iter().map(|s| s.name().to_owned()).collect(),
        skipped,
        scenarios: measurements,
    };
    print!("{}", report::table(&report.scenarios));
    report::write(out, &report).map_err(Error::Report)?;
    chart::draw(&out.join("allocs.svg"), &report.subjects, &report.scenarios)
        .map_err(Error::Chart)?;
    println!(
        "\nwrote {}: report.md, report.json, allocs.svg, dhat-<subject>-<scenario>.json",
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::builtin;

    fn names(subjects: &[Box<dyn Subject>], asked: &[&str], io: &[IoMode]) -> Vec<String> {
        let asked: Vec<String> = asked.iter().map(|&n| n.to_owned()).collect();
        let subjects: Vec<&dyn Subject> = subjects.iter().map(AsRef::as_ref).collect();
        match choose(&subjects, &asked, io) {
            Ok(chosen) => chosen.iter().map(|s| s.name().to_owned()).collect(),
            Err(e) => vec![e.to_string()],
        }
    }

    #[test]
    fn io_picks_server_demo_variants() {
        let all = builtin();
        let both = cli::DEFAULT_IO;
        assert_eq!(
            names(&all, &[], &both),
            [
                "server-demo-epoll",
                "server-demo-uring",
                "hyper",
                "server-demo-bin-epoll",
                "server-demo-bin-uring",
                "hyper-bin",
                "may-minihttp-bin",
                "nginx",
                "ws-tungstenite",
                "ws-fastwebsockets",
                "bufslab-ws-bin-epoll",
                "bufslab-ws-bin-uring",
                "ws-tungstenite-bin",
                "ws-fastwebsockets-bin"
            ]
        );
        // bufslab's WebSocket echo runs under an explicit driver only, as `--io` names it.
        assert_eq!(
            names(&all, &[], &[IoMode::Auto]),
            [
                "server-demo-auto",
                "hyper",
                "server-demo-bin-auto",
                "hyper-bin",
                "may-minihttp-bin",
                "nginx",
                "ws-tungstenite",
                "ws-fastwebsockets",
                "ws-tungstenite-bin",
                "ws-fastwebsockets-bin"
            ]
        );
        assert_eq!(
            names(&all, &["bufslab-ws-bin"], &[IoMode::Uring]),
            ["bufslab-ws-bin-uring"]
        );
        assert_eq!(
            names(&all, &["server-demo-bin"], &[IoMode::Epoll]),
            ["server-demo-bin-epoll"]
        );
        // The family name: each variant `--io` keeps; the report keeps the subjects' order.
        assert_eq!(
            names(
                &all,
                &["hyper", "server-demo"],
                &[IoMode::Uring, IoMode::Epoll]
            ),
            ["server-demo-epoll", "server-demo-uring", "hyper"]
        );
        assert_eq!(
            names(&all, &["server-demo"], &[IoMode::Uring]),
            ["server-demo-uring"]
        );
        // A whole name runs whatever `--io` says.
        assert_eq!(
            names(&all, &["server-demo-auto"], &both),
            ["server-demo-auto"]
        );
        let unknown = names(&all, &["server"], &both);
        assert!(unknown[0].starts_with("unknown subject `server` (known: server-demo-epoll "));
    }
}
