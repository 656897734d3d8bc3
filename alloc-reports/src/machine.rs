//! Where and when a report was produced: the machine, the date and the source revision.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// What a reader needs to compare a report with another run.
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// CPU model, from `/proc/cpuinfo`.
    pub cpu: String,
    /// Logical cores available to the process.
    pub cores: usize,
    /// Operating system and kernel release.
    pub os: String,
    /// UTC date and time of the run, `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// `git rev-parse --short HEAD`, with `-modified` when the tree has uncommitted changes;
    /// `unknown` outside a git checkout.
    pub git_revision: String,
}

impl Provenance {
    /// Reads the machine, the clock and the revision of the checkout at `repo`.
    #[must_use]
    pub fn collect(repo: &Path) -> Provenance {
        Provenance {
            cpu: cpu_model().unwrap_or_else(|| "unknown".to_owned()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: os_release(),
            date: utc_date(SystemTime::now()),
            git_revision: git_revision(repo).unwrap_or_else(|| "unknown".to_owned()),
        }
    }
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, model)| model.trim().to_owned())
}

fn os_release() -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned());
    format!("{} {kernel}", std::env::consts::OS)
}

fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn git_revision(repo: &Path) -> Option<String> {
    let rev = git(repo, &["rev-parse", "--short", "HEAD"])?;
    // A report from uncommitted sources cannot be reproduced from the revision alone.
    let dirty = git(repo, &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{rev}-modified")
    } else {
        rev
    })
}

/// Formats `t` as `YYYY-MM-DD HH:MM UTC` without a date crate.
#[must_use]
pub fn utc_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates() {
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01 00:00 UTC");
        // 2024-02-29 12:34:56 UTC
        let leap = UNIX_EPOCH + Duration::from_secs(1_709_210_096);
        assert_eq!(utc_date(leap), "2024-02-29 12:34 UTC");
        let y2k = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(utc_date(y2k), "2000-02-29 00:00 UTC");
    }
}
