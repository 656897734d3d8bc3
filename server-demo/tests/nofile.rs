//! The descriptor limit at start-up: the binary, started under `prlimit` with the usual soft
//! limit of 1024, raises it to the hard limit, and where even that is below what its workers'
//! connection slots need, says so in one line on stderr and serves anyway.

mod common;

use std::io::{BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

use common::{listening_addr, Client, GET_PLAINTEXT, HELLO};

/// The soft and hard `Max open files` of `/proc/<pid>/limits` (`self` for this process);
/// `None` for unlimited.
fn nofile(pid: &str) -> (Option<u64>, Option<u64>) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .unwrap_or_else(|| panic!("no descriptor limit in {limits}"));
    let mut values = line.split_whitespace().map(|v| v.parse().ok());
    (values.next().flatten(), values.next().flatten())
}

/// Whether `prlimit` (util-linux) runs here; says why not on the stderr handle, which libtest
/// does not capture, so the skip shows.
fn have_prlimit(test: &str) -> bool {
    match Command::new("prlimit").arg("--version").output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr).into_owned();
            let _ = writeln!(std::io::stderr(), "skipped: {test}: prlimit fails: {why}");
            false
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "skipped: {test}: no prlimit: {e}");
            false
        }
    }
}

/// The binary under `prlimit --nofile=SOFT:HARD` (prlimit sets its own limits, then execs it,
/// so the child's pid is the server's), one worker with `max_conns` slots, epoll: the limit
/// is the engine's, whatever the driver.
fn spawn(soft: u64, hard: u64, max_conns: u32) -> Child {
    Command::new("prlimit")
        .arg(format!("--nofile={soft}:{hard}"))
        .arg(env!("CARGO_BIN_EXE_server-demo"))
        .args(["--addr", "127.0.0.1:0", "--workers", "1", "--io", "epoll"])
        .args(["--max-conns", &max_conns.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn prlimit")
}

/// Waits for the listening line (start-up, and so the limit's raise, is done by then) and
/// checks that the server answers. Returns its stdout, to be kept open until it exits: it
/// prints its summary there.
fn listening(child: &mut Child) -> BufReader<ChildStdout> {
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let addr = listening_addr(&mut stdout);
    assert_eq!(Client::new(addr).request(GET_PLAINTEXT).body, HELLO);
    stdout
}

/// Stops the server with SIGTERM; returns what it wrote on stderr.
fn stop(mut child: Child, mut stdout: BufReader<ChildStdout>) -> String {
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: signalling our own child, which has not been waited for.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("read stdout");
    let status = child.wait().expect("wait");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    assert!(status.success(), "{status}: {stderr}");
    stderr
}

fn warnings(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with("bufslab-server: descriptor limit"))
        .count()
}

#[test]
fn a_soft_descriptor_limit_is_raised_to_the_hard_one() {
    let test = "a_soft_descriptor_limit_is_raised_to_the_hard_one";
    if !have_prlimit(test) {
        return;
    }
    let (_, hard) = nofile("self");
    let hard = hard.unwrap_or(1 << 20);
    // A few slots: what they need fits under any hard limit, so no warning is due.
    let mut child = spawn(1024, hard, 64);
    let stdout = listening(&mut child);
    let (soft, _) = nofile(&child.id().to_string());
    let stderr = stop(child, stdout);
    assert_eq!(soft, Some(hard), "{stderr}");
    assert_eq!(warnings(&stderr), 0, "{stderr}");
}

#[test]
fn a_limit_below_the_connection_slots_is_said_once_and_the_server_runs() {
    let test = "a_limit_below_the_connection_slots_is_said_once_and_the_server_runs";
    if !have_prlimit(test) {
        return;
    }
    // Hard 1024 too, so nothing can raise it: 2000 slots need more.
    let mut child = spawn(1024, 1024, 2000);
    let stdout = listening(&mut child);
    let (soft, _) = nofile(&child.id().to_string());
    let stderr = stop(child, stdout);
    assert_eq!(soft, Some(1024), "{stderr}");
    assert_eq!(warnings(&stderr), 1, "{stderr}");
    assert!(
        stderr.contains("descriptor limit 1024") && stderr.contains("ulimit -n"),
        "{stderr}"
    );
}
