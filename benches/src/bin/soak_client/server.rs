//! The server's process, read from `/proc`, and its state after a phase.

use std::thread;
use std::time::{Duration, Instant};

use crate::ctx::{Ctx, Stats};

pub fn fds(pid: u32) -> Result<usize, String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(Iterator::count)
        .map_err(|e| format!("/proc/{pid}/fd: {e}"))
}

pub fn rss_kib(pid: u32) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no VmRSS in /proc/{pid}/status"))
}

/// Waits up to `wait` for the server's descriptors to come down to `target`; the last count.
fn fds_settled(pid: u32, target: usize, wait: Duration) -> Result<usize, String> {
    let limit = Instant::now() + wait;
    loop {
        let n = fds(pid)?;
        if n <= target || Instant::now() >= limit {
            return Ok(n);
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// The server after a phase, once it let go of the phase's connections.
pub struct Reading {
    /// Taken once the descriptors settled; it counts its own connection and block.
    pub stats: Stats,
    /// Whether the server got back to no connection and no block before the time limit.
    pub quiet: bool,
    pub fds: usize,
    pub rss: u64,
}

pub fn settle(
    ctx: &Ctx,
    rented_idle: u64,
    fd_base: usize,
    fd_wait: Duration,
) -> Result<Reading, String> {
    let pid = ctx.args.pid;
    let (_, quiet) = ctx.quiesce(rented_idle)?;
    let fds = fds_settled(pid, fd_base, fd_wait)?;
    let stats = ctx.stats()?;
    let rss = rss_kib(pid)?;
    Ok(Reading {
        stats,
        quiet,
        fds,
        rss,
    })
}

pub fn describe(r: &Result<Reading, String>) -> String {
    match r {
        Ok(r) => format!(
            "{} fds, RSS {} KiB, pool slabs {} KiB, {} block(s) rented, {} connection(s) open \
             (the /stats one included; settled: {})",
            r.fds,
            r.rss,
            r.stats.pool_allocated / 1024,
            r.stats.rented_blocks,
            r.stats.connections_open,
            r.quiet
        ),
        Err(e) => format!("the server could not be read: {e}"),
    }
}
