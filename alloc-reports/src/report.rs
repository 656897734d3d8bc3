//! The table and the files that carry it: `report.md` and `report.json`.

use std::fmt::{self, Write as _};
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::machine::Provenance;
use crate::measure::Measurement;

/// A whole run: where it ran, how it was invoked, and every measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Machine, date and revision.
    pub provenance: Provenance,
    /// The command that produced the report.
    pub command: String,
    /// The subjects' names, in report order.
    pub subjects: Vec<String>,
    /// The subjects asked for that could not run on this machine, and why.
    pub skipped: Vec<Skipped>,
    /// One entry per scenario and subject it applies to, in the order run (a scenario's
    /// subjects one after another).
    pub scenarios: Vec<Measurement>,
}

/// A subject left out of a run because it cannot run on this machine
/// ([`crate::Subject::unavailable`]).
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// The subject's name.
    pub subject: String,
    /// Why it cannot run here (e.g. `io_uring refused: ...`).
    pub reason: String,
}

/// Why a report file could not be written.
#[derive(Debug)]
pub enum ReportError {
    /// Writing a file failed.
    Io(PathBuf, io::Error),
    /// Serializing `report.json` failed.
    Json(serde_json::Error),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Io(path, e) => write!(f, "cannot write {}: {e}", path.display()),
            ReportError::Json(e) => write!(f, "cannot serialize the report: {e}"),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Io(_, e) => Some(e),
            ReportError::Json(e) => Some(e),
        }
    }
}

const HEADER: [&str; 15] = [
    "scenario",
    "server",
    "counted by",
    "driver",
    "free list",
    "requests",
    "warm-up",
    "allocations",
    "bytes",
    "allocs/request",
    "bytes/request",
    "allocs/new conn",
    "peak heap",
    "pool rented / peak",
    "pool misses",
];

/// A cell with nothing to say: a figure that does not apply to the row's server or scenario.
const NONE: &str = "–";

/// The table as Markdown, columns padded so it reads the same on a terminal.
#[must_use]
pub fn table(measurements: &[Measurement]) -> String {
    let rows: Vec<[String; 15]> = measurements
        .iter()
        .map(|m| {
            [
                format!("`{}`", m.scenario),
                m.subject.clone(),
                m.method.name().to_owned(),
                m.driver.unwrap_or(NONE).to_owned(),
                m.strategy.unwrap_or(NONE).to_owned(),
                m.requests.to_string(),
                m.warmup.to_string(),
                m.allocations.to_string(),
                m.bytes.to_string(),
                per(m.allocations_per_request()),
                per(m.bytes_per_request()),
                m.allocations_per_connection()
                    .map_or_else(|| NONE.to_owned(), per),
                kib(m.peak_heap_bytes),
                m.pool.map_or_else(
                    || NONE.to_owned(),
                    |p| format!("{} blocks / {}", p.rented_blocks, kib(p.peak_out_bytes)),
                ),
                m.pool_misses
                    .map_or_else(|| NONE.to_owned(), |n| n.to_string()),
            ]
        })
        .collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    line(&mut out, &widths, HEADER.iter().map(|h| (*h, false)));
    line(
        &mut out,
        &widths,
        widths.iter().enumerate().map(|(i, _)| ("", i > 4)),
    );
    for row in &rows {
        line(
            &mut out,
            &widths,
            row.iter().enumerate().map(|(i, c)| (c.as_str(), i > 4)),
        );
    }
    out
}

/// One table line; an empty cell on the rule line becomes dashes (with a `:` on the right of
/// right-aligned columns).
fn line<'a>(out: &mut String, widths: &[usize], cells: impl Iterator<Item = (&'a str, bool)>) {
    for ((cell, right), &w) in cells.zip(widths) {
        out.push_str("| ");
        if cell.is_empty() {
            out.push_str(&"-".repeat(w - usize::from(right)));
            if right {
                out.push(':');
            }
        } else if right {
            let _ = write!(out, "{cell:>w$}");
        } else {
            let _ = write!(out, "{cell:<w$}");
        }
        out.push(' ');
    }
    out.push_str("|\n");
}

/// A per-request figure: exact zero as `0`, anything else with enough digits to see it.
fn per(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

fn kib(bytes: usize) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}

/// `report.md`: the table, what its columns mean, and where it came from.
#[must_use]
pub fn markdown(report: &Report) -> String {
    let p = &report.provenance;
    let mut out = format!(
        "# Allocations per request: {}\n\n",
        report.subjects.join(", ")
    );
    let _ = write!(
        out,
        "Produced by `{}` on {}, git revision `{}`.\n\
         Machine: {}, {} cores, {}.\n\n",
        report.command, p.date, p.git_revision, p.cpu, p.cores, p.os
    );
    out.push_str(&table(&report.scenarios));
    out.push_str(
        "\n\
        `counted by`: `dhat` for a server in alloc-reports' own process, dhat its global \
        allocator, counting every thread of the process (server and client; the client \
        allocates nothing in the window) between two snapshots taken after warm-up; \
        `preload` for a server binary in a process of its own, counted by alloc-reports' \
        allocation counter in `LD_PRELOAD` (every call of the C heap's allocation functions \
        in that process and the children it forks, whatever the language) between two reads \
        at the same points. Both count a `realloc` of a live block as one allocation. \
        `allocations` and `bytes` are what was allocated in that window, and the per-request \
        columns divide them by its requests. `allocs/new conn` is for scenarios that open a \
        connection per request. `peak heap` is the largest live heap since the scenario's \
        server started, its pool's preallocated slabs included (for `preload`, in the C \
        allocator's usable sizes, a little above what was asked for). The pool columns, for a \
        server built on bufslab in process, are read after the window: blocks still rented, \
        the peak of bytes out of the shared free lists, and the window's gets that found a \
        free list empty. `–`: does not apply.\n\n\
        Servers: one worker each. server-demo with idle eviction off and every other setting \
        at its default but the I/O driver, one subject per driver (`server-demo-epoll`, \
        `server-demo-uring`; `driver`: the one that ran); hyper 1.x as the load harness's \
        `hyper_baseline` (one current-thread tokio runtime, `http1` with pipeline flush). \
        The `-bin` subjects are the same servers as release binaries (`server-demo --workers \
        1 --io MODE`, `hyper_baseline --workers 1`; server-demo's binary keeps idle eviction \
        on its 10 s timer), `may-minihttp-bin` the load harness's `may_baseline --workers 1`, \
        and `nginx` Debian's nginx with one worker process, serving the same plaintext and \
        json bodies with `return`. In the WebSocket scenarios (`ws-echo-*` binary, `ws-text-*` text) a request is one \
        masked binary message and its echo, on one connection upgraded before warm-up; \
        `ws-tungstenite` is tokio-tungstenite as the WebSocket load harness's \
        `ws_tungstenite` (its README's echo server), `ws-fastwebsockets` fastwebsockets over \
        a hyper upgrade as `ws_fastwebsockets` (its echo example), both one current-thread \
        tokio runtime. The allocation sites of each dhat run, start-up included, \
        are in `dhat-<server>-<scenario>.json` (open it in dhat's `dh_view.html`); \
        `allocs.svg` plots each window's cumulative allocations against its requests, one \
        panel per scenario, one line per server.\n",
    );
    for s in &report.skipped {
        let _ = write!(out, "\nNot run on {}: skipped: {}.\n", s.subject, s.reason);
    }
    for (subject, skipped) in not_run(report) {
        let _ = write!(
            out,
            "\nNot run on {subject} (the scenario does not apply to it): {}.\n",
            skipped.join(", ")
        );
    }
    out
}

/// For each subject that skipped some of the run's scenarios, their names.
fn not_run(report: &Report) -> Vec<(&str, Vec<&str>)> {
    let mut scenarios: Vec<&str> = Vec::new();
    for m in &report.scenarios {
        if !scenarios.contains(&m.scenario) {
            scenarios.push(m.scenario);
        }
    }
    report
        .subjects
        .iter()
        .map(|subject| {
            let skipped = scenarios
                .iter()
                .copied()
                .filter(|s| {
                    !report
                        .scenarios
                        .iter()
                        .any(|m| m.scenario == *s && m.subject == *subject)
                })
                .collect();
            (subject.as_str(), skipped)
        })
        .filter(|(_, skipped): &(&str, Vec<&str>)| !skipped.is_empty())
        .collect()
}

/// Writes `report.md` and `report.json` into `dir`.
///
/// # Errors
/// [`ReportError`] when serializing or writing fails.
pub fn write(dir: &Path, report: &Report) -> Result<(), ReportError> {
    let md = dir.join("report.md");
    std::fs::write(&md, markdown(report)).map_err(|e| ReportError::Io(md, e))?;
    let mut json = serde_json::to_vec_pretty(report).map_err(ReportError::Json)?;
    json.push(b'\n');
    let path = dir.join("report.json");
    std::fs::write(&path, json).map_err(|e| ReportError::Io(path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(subject: &str, scenario: &'static str, allocations: u64) -> Measurement {
        Measurement {
            subject: subject.to_owned(),
            scenario,
            description: "",
            strategy: None,
            driver: None,
            method: crate::measure::Method::Dhat,
            warmup: 0,
            requests: 100,
            connections: 0,
            allocations,
            bytes: 0,
            peak_heap_bytes: 0,
            peak_heap_blocks: 0,
            pool: None,
            pool_misses: None,
            window_secs: 0.0,
            samples: Vec::new(),
            profile: None,
        }
    }

    #[test]
    fn subjects_side_by_side_and_skips_named() {
        let report = Report {
            provenance: Provenance {
                cpu: "cpu".into(),
                cores: 2,
                os: "os".into(),
                date: "date".into(),
                git_revision: "rev".into(),
            },
            command: "cmd".into(),
            subjects: vec!["server-demo".into(), "hyper".into()],
            skipped: vec![Skipped {
                subject: "server-demo-uring".into(),
                reason: "io_uring refused: EPERM".into(),
            }],
            scenarios: vec![
                measured("server-demo", "plaintext", 0),
                measured("hyper", "plaintext", 600),
                measured("server-demo", "malformed-400", 0),
            ],
        };
        let md = markdown(&report);
        assert!(md.starts_with("# Allocations per request: server-demo, hyper\n"));
        assert!(md.contains("Not run on hyper (the scenario does not apply to it): malformed-400."));
        assert!(!md.contains("Not run on server-demo:"));
        assert!(md.contains("Not run on server-demo-uring: skipped: io_uring refused: EPERM."));
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| `")).collect();
        assert_eq!(rows.len(), 3);
        assert!(rows[1].contains("| hyper ") && rows[1].contains(" 6.000 |"));
        // No pool, no free list: the cells say so rather than 0.
        assert!(rows[1].contains("| – "));
    }
}
