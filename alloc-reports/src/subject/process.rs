//! Any server binary as a subject: started from a command line in a process of its own, with
//! alloc-reports' allocation counter preloaded into it.
//!
//! dhat counts only what goes through the Rust global allocator of the process it is linked
//! into, so it cannot see a server that is a binary (Rust or not), nor the allocations that C
//! code makes inside a Rust server (a TLS library's `malloc`). For those, alloc-reports
//! builds a small counter (`preload/alloc_counter.c`), starts the server with it in
//! `LD_PRELOAD`, and reads the counts at the window's two ends from a file the counter maps
//! shared. Why a counter of its own and not heaptrack or valgrind's DHAT, which count any
//! process too: a window is two reads of a live counter, at the moments the client chooses,
//! with the server running at full speed on its own allocator. heaptrack would need every
//! allocation recorded with a timestamp and the window cut out afterwards by time, and
//! DHAT runs the server on valgrind's synthetic CPU and one thread at a time, tens of times
//! slower, which changes what a timer-driven server does per request. Both remain the tools
//! to use for *where* a process allocates; this counter only says how much.
//!
//! What it sees: every call of glibc's allocation functions (`malloc`, `calloc`, `realloc`,
//! `reallocarray`, `posix_memalign`, `aligned_alloc`, `memalign`, `valloc`, `pvalloc`) in the
//! process and in children it forks (nginx's workers). What it cannot see: a statically
//! linked binary (Go's, musl's) or one that brings its own allocator without going through
//! glibc's symbols (a Rust binary with jemalloc or mimalloc as its global allocator, most of
//! a JVM's heap); `start` fails for a process where the counter did not load, rather than
//! report zeros.

use std::fs::{self, File};
use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ::server_demo::IoMode;

use super::{Hyper, Running, Subject, SubjectError};
use crate::certificate;
use crate::measure::{HeapCounts, Method};
use crate::scenario::Scenario;

/// The counter's shared object, built by `build.rs`; written to each run's directory, so the
/// binary works wherever it is copied.
const COUNTER_SO: &[u8] = include_bytes!(env!("ALLOC_COUNTER_SO"));

/// `struct counts` of `preload/alloc_counter.c`: six little-endian u64s.
const COUNTS_LEN: usize = 48;
const COUNTS_MAGIC: u64 = 0x3174_6e75_6f63_6c61;

/// How long a server may take to listen, and to exit after SIGTERM.
const START: Duration = Duration::from_secs(20);
const STOP: Duration = Duration::from_secs(10);

/// The placeholders that arguments and files may hold.
const PORT: &str = "{port}";
const DIR: &str = "{dir}";

/// Where a [`Process`] subject's program comes from.
#[derive(Clone, Debug)]
pub enum Program {
    /// A path to the binary.
    Path(PathBuf),
    /// A binary of this workspace, built by `cargo build` (with this binary's profile) before
    /// the run, so the measured binary is the source as it is.
    Workspace {
        /// Its package.
        package: &'static str,
        /// Its binary or example target.
        bin: &'static str,
    },
    /// A program installed on the machine, found on `PATH` or in `/usr/sbin`; the subject is
    /// left out, with `hint` in the reason, where it is not installed.
    Installed {
        /// The program's name.
        name: &'static str,
        /// How to install it (`apt-get install nginx-light`).
        hint: &'static str,
    },
}

/// A server binary, started per scenario from a command line, counted by the preloaded
/// counter ([`Method::Preload`]).
///
/// Arguments and files may hold `{port}` (the loopback port it must listen on, on
/// `127.0.0.1`) and `{dir}` (a fresh directory for the run: configuration, logs, pid files).
/// A server that speaks HTTPS says how ([`Process::https`]); for the HTTPS scenarios the run's
/// certificate and key are then in `{dir}/cert.pem` and `{dir}/key.pem`.
///
/// # Examples
///
/// ```no_run
/// use alloc_reports::subject::{Process, Program};
///
/// let mine = Process::new(
///     "my-server",
///     Program::Path("target/release/my-server".into()),
///     ["--listen", "127.0.0.1:{port}", "--threads", "1"],
/// );
/// # let _ = mine;
/// ```
#[derive(Debug)]
pub struct Process {
    name: String,
    program: Program,
    args: Vec<String>,
    files: Vec<(String, String)>,
    scenarios: fn(Scenario) -> bool,
    free_list_flag: Option<(String, &'static str)>,
    io: Option<IoMode>,
    driver: Option<&'static str>,
    needs_flag: Option<&'static str>,
    https: Option<HttpsSetup>,
    resolved: OnceLock<Result<PathBuf, String>>,
}

/// How a [`Process`] serves HTTPS: arguments added, and files that replace those of the same
/// name.
#[derive(Debug, Default)]
struct HttpsSetup {
    args: Vec<String>,
    files: Vec<(String, String)>,
}

impl Process {
    /// A subject named `name` that runs `program` with `args`.
    #[must_use]
    pub fn new<I, S>(name: impl Into<String>, program: Program, args: I) -> Process
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Process {
            name: name.into(),
            program,
            args: args.into_iter().map(Into::into).collect(),
            files: Vec::new(),
            scenarios: Scenario::is_http,
            free_list_flag: None,
            io: None,
            driver: None,
            needs_flag: None,
            https: None,
            resolved: OnceLock::new(),
        }
    }

    /// A subject from `NAME=PROGRAM ARG...`, as `--process` takes it: split on whitespace,
    /// without quoting.
    ///
    /// # Errors
    /// The reason, when there is no `=` or no program.
    pub fn from_spec(spec: &str) -> Result<Process, String> {
        let (name, line) = spec
            .split_once('=')
            .ok_or_else(|| format!("`{spec}`: expected NAME=COMMAND"))?;
        let mut words = line.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| format!("`{spec}`: the command is empty"))?;
        if !line.contains(PORT) {
            return Err(format!(
                "`{spec}`: the command must say where to listen with {PORT} (127.0.0.1:{PORT})"
            ));
        }
        Ok(Process::new(
            name,
            Program::Path(PathBuf::from(program)),
            words,
        ))
    }

    /// Writes `contents` (with the placeholders replaced) to `{dir}/name` before each start:
    /// a configuration file the arguments point to.
    #[must_use]
    pub fn file(mut self, name: impl Into<String>, contents: impl Into<String>) -> Process {
        self.files.push((name.into(), contents.into()));
        self
    }

    /// Only the scenarios `answers` takes apply (by default every HTTP one that asks for no
    /// pool free list): those the server answers as [`Scenario::expected`] says, or for the
    /// WebSocket ones, whose messages it echoes. An HTTPS scenario applies where the server
    /// speaks HTTPS ([`Process::https`]) and `answers` takes its HTTP scenario
    /// ([`Scenario::http`]).
    #[must_use]
    pub fn scenarios(mut self, answers: fn(Scenario) -> bool) -> Process {
        self.scenarios = answers;
        self
    }

    /// The server is built on a bufslab pool, takes its free list with `flag`
    /// (`--pool-strategy`), and uses `default` without it: the free-list scenarios apply, and
    /// run with `flag queue` or `flag stack`; the report's `free list` column says which.
    #[must_use]
    pub fn free_list_flag(mut self, flag: impl Into<String>, default: &'static str) -> Process {
        self.free_list_flag = Some((flag.into(), default));
        self
    }

    /// The server speaks HTTPS (TLS 1.3) when given `args` as well (which may name
    /// `{dir}/cert.pem` and `{dir}/key.pem`, written before it starts): the HTTPS scenarios
    /// apply.
    #[must_use]
    pub fn https<I, S>(mut self, args: I) -> Process
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.https.get_or_insert_with(HttpsSetup::default).args =
            args.into_iter().map(Into::into).collect();
        self
    }

    /// For the HTTPS scenarios, `contents` replaces the file `name` given to
    /// [`file`](Self::file) (a configuration that listens with TLS); the HTTPS scenarios apply.
    #[must_use]
    pub fn https_file(mut self, name: impl Into<String>, contents: impl Into<String>) -> Process {
        self.https
            .get_or_insert_with(HttpsSetup::default)
            .files
            .push((name.into(), contents.into()));
        self
    }

    /// The server-demo I/O mode its arguments choose, for `--io` (see [`Subject::io`]).
    #[must_use]
    pub fn io(mut self, io: IoMode) -> Process {
        self.io = Some(io);
        self
    }

    /// What moves its bytes, for the report's `driver` column.
    #[must_use]
    pub fn driver(mut self, driver: &'static str) -> Process {
        self.driver = Some(driver);
        self
    }

    /// The program's path, found or built on first use.
    /// The subject is left out, saying so, where the program's `--help` does not name `flag`:
    /// for a server whose feature has not landed yet, a clear reason instead of its usage.
    #[must_use]
    pub fn needs_flag(mut self, flag: &'static str) -> Process {
        self.needs_flag = Some(flag);
        self
    }

    fn program(&self) -> Result<&Path, String> {
        self.resolved
            .get_or_init(|| resolve(&self.program))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// Starts the server, listening, with the counter loaded.
    fn spawn(&self, scenario: Scenario) -> Result<Started, SubjectError> {
        let program = self.program()?.to_path_buf();
        let dir = RunDir::new(&self.name)?;
        let port = free_port()?;
        let fill = |s: &str| {
            s.replace(PORT, &port.to_string())
                .replace(DIR, &dir.path.to_string_lossy())
        };
        let https = match scenario.https() {
            Some(_) => {
                let cert = certificate::localhost()?;
                fs::write(dir.path.join("cert.pem"), &cert.cert_pem)?;
                fs::write(dir.path.join("key.pem"), &cert.key_pem)?;
                self.https.as_ref()
            }
            None => None,
        };
        for (name, contents) in &self.files {
            let contents = https
                .and_then(|h| h.files.iter().find(|(n, _)| n == name))
                .map_or(contents, |(_, c)| c);
            fs::write(dir.path.join(name), fill(contents))?;
        }
        let counter_so = dir.path.join("alloc_counter.so");
        fs::write(&counter_so, COUNTER_SO)?;
        let counts_path = dir.path.join("counts");
        fs::write(&counts_path, [0u8; 4096])?;
        // Opened before the child exists, so that no error leaves it running unowned.
        let counts = File::open(&counts_path)?;
        let log_path = dir.path.join("server.log");
        let log = File::create(&log_path)?;

        let mut args: Vec<String> = self.args.iter().map(|a| fill(a)).collect();
        args.extend(https.iter().flat_map(|h| h.args.iter().map(|a| fill(a))));
        if let (Some((flag, _)), Some(strategy)) = (&self.free_list_flag, scenario.strategy()) {
            args.push(flag.clone());
            args.push(strategy.name().to_owned());
        }
        let preload = match std::env::var_os("LD_PRELOAD") {
            Some(other) if !other.is_empty() => {
                let mut all = counter_so.clone().into_os_string();
                all.push(":");
                all.push(other);
                all
            }
            _ => counter_so.into_os_string(),
        };
        let child = Command::new(&program)
            .args(&args)
            .env("LD_PRELOAD", preload)
            .env("ALLOC_COUNTER_FILE", &counts_path)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let mut started = Started {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            counts,
            log_path,
            free_list: self
                .free_list_flag
                .as_ref()
                .map(|&(_, default)| scenario.strategy().map_or(default, |s| s.name())),
            driver: self.driver,
            _dir: dir,
        };
        started.wait_listening(&program)?;
        if read_counts(&started.counts)?.is_none() {
            return Err(format!(
                "{}: the allocation counter did not load into it (a statically linked binary, \
                 or one that clears LD_PRELOAD?); its allocations cannot be counted this way",
                program.display()
            )
            .into());
        }
        Ok(started)
    }
}

impl Subject for Process {
    fn name(&self) -> &str {
        &self.name
    }

    fn applies_to(&self, scenario: Scenario) -> bool {
        if scenario.https().is_some() {
            return self.https.is_some() && (self.scenarios)(scenario.http());
        }
        (self.scenarios)(scenario)
            && (scenario.strategy().is_none() || self.free_list_flag.is_some())
    }

    fn start(&self, scenario: Scenario) -> Result<Box<dyn Running>, SubjectError> {
        Ok(Box::new(self.spawn(scenario)?))
    }

    fn io(&self) -> Option<IoMode> {
        self.io
    }

    /// Where the program is missing or cannot be built, or does not start (server-demo's
    /// `--io uring` exits with status 2 and the reason where io_uring is refused).
    fn unavailable(&self) -> Option<String> {
        let program = match self.program() {
            Ok(p) => p,
            Err(e) => return Some(e),
        };
        if let Some(flag) = self.needs_flag {
            let help = Command::new(program).arg("--help").output();
            let named = help.is_ok_and(|o| {
                String::from_utf8_lossy(&o.stdout).contains(flag)
                    || String::from_utf8_lossy(&o.stderr).contains(flag)
            });
            if !named {
                return Some(format!(
                    "{} has no {flag} flag (not built into it yet)",
                    program.display()
                ));
            }
        }
        let scenario = Scenario::ALL
            .into_iter()
            .find(|&s| self.applies_to(s))
            .unwrap_or(Scenario::Plaintext);
        match self.spawn(scenario) {
            Ok(started) => {
                // A failed stop here would fail the real runs too, and be reported there.
                let _ = Box::new(started).stop();
                None
            }
            Err(e) => Some(e.to_string()),
        }
    }

    fn method(&self) -> Method {
        Method::Preload
    }
}

/// A running server process.
struct Started {
    child: Child,
    addr: SocketAddr,
    counts: File,
    log_path: PathBuf,
    free_list: Option<&'static str>,
    driver: Option<&'static str>,
    /// Removed once the process is gone.
    _dir: RunDir,
}

impl Started {
    /// Waits until the server accepts connections, or fails with what it printed when it
    /// exits first or takes too long.
    fn wait_listening(&mut self, program: &Path) -> Result<(), SubjectError> {
        let since = Instant::now();
        loop {
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(100)).is_ok() {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                return Err(format!(
                    "{} exited with {status} before listening on {}: {}",
                    program.display(),
                    self.addr,
                    log_tail(&self.log_path)
                )
                .into());
            }
            if since.elapsed() > START {
                return Err(format!(
                    "{} did not listen on {} within {} s: {}",
                    program.display(),
                    self.addr,
                    START.as_secs(),
                    log_tail(&self.log_path)
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then SIGKILL if it has not exited after [`STOP`].
    fn terminate(&mut self) -> Result<(), SubjectError> {
        if self.child.try_wait()?.is_some() {
            return Ok(());
        }
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let since = Instant::now();
        while since.elapsed() < STOP {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.child.kill()?;
        self.child.wait()?;
        Err(format!(
            "the server did not exit within {} s of SIGTERM; killed",
            STOP.as_secs()
        )
        .into())
    }
}

/// A server left running by a failed start or a failed scenario (whose `Running` is dropped
/// without `stop`) would keep its port and its CPU for the rest of the run: stop it here too.
/// After `stop` the process has exited, and this does nothing.
impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.terminate();
    }
}

impl Running for Started {
    fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server side's sockets on its port that it has not closed yet (established, or
    /// closed by the client only), from the kernel's table: a server in another process
    /// need not count them. Reading `/proc` allocates in this process, which the window of a
    /// preload-counted subject does not count.
    fn open_connections(&self) -> Option<u64> {
        let pid = self.child.id();
        let mut open = 0;
        for table in ["tcp", "tcp6"] {
            let text = fs::read_to_string(format!("/proc/{pid}/net/{table}")).ok()?;
            open += open_on_port(&text, self.addr.port());
        }
        Some(open)
    }

    fn free_list(&self) -> Option<&'static str> {
        self.free_list
    }

    fn driver(&self) -> Option<&'static str> {
        self.driver
    }

    fn heap(&self) -> Option<HeapCounts> {
        read_counts(&self.counts).ok().flatten()
    }

    fn stop(mut self: Box<Self>) -> Result<(), SubjectError> {
        self.terminate()
    }
}

/// Sockets in `table` (`/proc/net/tcp`'s format) whose local port is `port` and whose state
/// is ESTABLISHED (`01`) or CLOSE_WAIT (`08`): accepted, or waiting to be, and not yet closed
/// by the server.
fn open_on_port(table: &str, port: u16) -> u64 {
    let want = format!(":{port:04X}");
    let open = table
        .lines()
        .skip(1)
        .filter(|line| {
            let mut fields = line.split_whitespace();
            let local = fields.nth(1).unwrap_or("");
            let state = fields.nth(1).unwrap_or("");
            local.ends_with(&want) && (state == "01" || state == "08")
        })
        .count();
    open as u64
}

/// The counts in the counter's file, or `None` while no process has mapped it. Read until two
/// reads agree, since the server may be counting while the file is read.
fn read_counts(file: &File) -> io::Result<Option<HeapCounts>> {
    let read = || -> io::Result<[u8; COUNTS_LEN]> {
        let mut buf = [0u8; COUNTS_LEN];
        file.read_exact_at(&mut buf, 0)?;
        Ok(buf)
    };
    let mut last = read()?;
    for _ in 0..16 {
        let now = read()?;
        if now == last {
            break;
        }
        last = now;
    }
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&last[i * 8..i * 8 + 8]);
        u64::from_le_bytes(b)
    };
    if word(0) != COUNTS_MAGIC {
        return Ok(None);
    }
    Ok(Some(HeapCounts {
        total_blocks: word(1),
        total_bytes: word(2),
        max_bytes: usize::try_from(word(4)).unwrap_or(usize::MAX),
        max_blocks: 0,
    }))
}

/// The last lines the server printed, for an error.
fn log_tail(path: &Path) -> String {
    let mut text = String::new();
    if File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .is_err()
    {
        return String::from("(no output)");
    }
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    if lines.is_empty() {
        return String::from("(no output)");
    }
    lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
}

/// A loopback port that was free a moment ago. A server given it binds it itself, so another
/// process could take it in between; on a test machine that is rare, and the start then
/// fails with the server's own message.
fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A run's directory (counter, files, log), removed when the server is done with it.
#[derive(Debug)]
struct RunDir {
    path: PathBuf,
}

impl RunDir {
    fn new(name: &str) -> io::Result<RunDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // tmpfs where there is one: the counter's page is then never written back to a disk.
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let path = base.join(format!(
            "alloc-reports-{}-{name}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path)?;
        Ok(RunDir { path })
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Finds or builds `program`.
fn resolve(program: &Program) -> Result<PathBuf, String> {
    match program {
        Program::Path(path) => {
            if path.is_file() {
                Ok(path.clone())
            } else {
                Err(format!("{}: no such file", path.display()))
            }
        }
        Program::Installed { name, hint } => {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
                .ok_or_else(|| format!("{name} is not installed ({hint})"))
        }
        Program::Workspace { package, bin } => workspace_binaries()
            .as_ref()
            .map_err(Clone::clone)?
            .iter()
            .find(|built| built.bin == *bin)
            .map(|built| built.path.clone())
            .ok_or_else(|| format!("cargo built no binary `{bin}` of package `{package}`")),
    }
}

/// The workspace binaries the built-in subjects run: (package, `--bin` or `--example`, name).
const WORKSPACE_BINS: [(&str, &str, &str); 6] = [
    ("server-demo", "--bin", "server-demo"),
    ("bufslab-benches", "--bin", "hyper_baseline"),
    ("bufslab-benches", "--bin", "may_baseline"),
    ("bufslab-benches", "--bin", "ws_tungstenite"),
    ("bufslab-benches", "--bin", "ws_fastwebsockets"),
    ("bufslab-server", "--example", "ws_echo"),
];

/// A binary cargo built: its target name and its path.
#[derive(Debug)]
struct Built {
    bin: String,
    path: PathBuf,
}

/// Builds [`WORKSPACE_BINS`] once per run with this binary's profile (`--release` unless
/// it has debug assertions), and returns where cargo put each.
fn workspace_binaries() -> &'static Result<Vec<Built>, String> {
    static BUILT: OnceLock<Result<Vec<Built>, String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let mut cmd = Command::new(cargo);
        cmd.arg("build")
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--message-format=json");
        // What `cargo run` and `cargo test` set for this package. ring's build script reruns
        // when `CARGO_MANIFEST_DIR` or `CARGO_PKG_*` differ from the last build's in cargo's
        // environment, so with them this build and the next plain `cargo build` would each
        // rebuild ring and everything above it (rustls, the servers), every time.
        for (key, _) in std::env::vars_os() {
            let package_var = key.to_str().is_some_and(|k| {
                k.starts_with("CARGO_PKG_")
                    || matches!(
                        k,
                        "CARGO_MANIFEST_DIR"
                            | "CARGO_MANIFEST_PATH"
                            | "CARGO_MANIFEST_LINKS"
                            | "CARGO_CRATE_NAME"
                            | "CARGO_BIN_NAME"
                            | "CARGO_PRIMARY_PACKAGE"
                            | "CARGO_TARGET_TMPDIR"
                            | "OUT_DIR"
                    )
            });
            if package_var {
                cmd.env_remove(key);
            }
        }
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        for (package, _, _) in WORKSPACE_BINS {
            cmd.args(["-p", package]);
        }
        for (_, kind, name) in WORKSPACE_BINS {
            cmd.args([kind, name]);
        }
        let out = cmd
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run cargo to build the server binaries: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo build of the server binaries failed ({})",
                out.status
            ));
        }
        Ok(executables(&String::from_utf8_lossy(&out.stdout)))
    })
}

/// The binaries and examples in cargo's `--message-format=json` output (their names are unique
/// among [`WORKSPACE_BINS`]).
fn executables(messages: &str) -> Vec<Built> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let path = m["executable"].as_str()?;
            let bin = m["target"]["name"].as_str()?;
            Some(Built {
                bin: bin.to_owned(),
                path: PathBuf::from(path),
            })
        })
        .collect()
}

/// nginx from the distribution's package, serving the plaintext and json responses the other
/// servers serve, one worker process, access log off, no keep-alive request limit (nginx's
/// default of 1000 would close the keep-alive scenarios' one connection); for the HTTPS
/// scenarios the same server listening with `ssl`, TLS 1.3 only, session tickets on (nginx's
/// default).
pub(crate) fn nginx() -> Process {
    const CONF: &str = r#"daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {
    worker_connections 1024;
}
http {
    access_log off;
    server_tokens off;
    keepalive_requests 1000000000;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {
        listen 127.0.0.1:{port};
        location = /plaintext {
            default_type text/plain;
            return 200 "Hello, World!";
        }
        location = /json {
            default_type application/json;
            return 200 '{"message":"Hello, World!"}';
        }
        location / {
            return 404;
        }
    }
}
"#;
    Process::new(
        "nginx",
        Program::Installed {
            name: "nginx",
            hint: "apt-get install nginx-light",
        },
        [
            "-p",
            "{dir}",
            "-e",
            "{dir}/error.log",
            "-c",
            "{dir}/nginx.conf",
        ],
    )
    .file("nginx.conf", CONF)
    .https_file(
        "nginx.conf",
        CONF.replace(
            "listen 127.0.0.1:{port};",
            "listen 127.0.0.1:{port} ssl;
        ssl_certificate {dir}/cert.pem;
        ssl_certificate_key {dir}/key.pem;
        ssl_protocols TLSv1.3;",
        ),
    )
    .scenarios(|s| serves_plaintext_and_json(s) || s == Scenario::Malformed)
}

/// The arguments of server-demo and of the hyper baseline for HTTPS.
const TLS_ARGS: [&str; 4] = ["--tls-cert", "{dir}/cert.pem", "--tls-key", "{dir}/key.pem"];

/// server-demo's own binary under `io`, configured as the in-process subject is (one worker);
/// over HTTPS with `--tls-cert` and `--tls-key`.
pub(crate) fn server_demo(io: IoMode) -> Process {
    bufslab_binary("server-demo-bin", "server-demo", "server-demo", io)
        .free_list_flag("--pool-strategy", "queue")
        .https(TLS_ARGS)
}

/// A binary of this workspace on `bufslab-server` under `io`, one worker, named
/// `<name>-<io>`. `auto` picks at start and the binary does not say which; the other two are
/// what ran (an explicit `--io uring` exits where io_uring is refused rather than fall back).
fn bufslab_binary(name: &str, package: &'static str, bin: &'static str, io: IoMode) -> Process {
    let server = Process::new(
        format!("{name}-{}", io.name()),
        Program::Workspace { package, bin },
        [
            "--addr",
            "127.0.0.1:{port}",
            "--workers",
            "1",
            "--io",
            io.name(),
        ],
    )
    .io(io);
    match io {
        IoMode::Auto => server,
        IoMode::Epoll | IoMode::Uring => server.driver(io.name()),
    }
}

/// The load harness's hyper baseline binary, one worker; over HTTPS with tokio-rustls (its
/// `--tls-cert` and `--tls-key`, as `benches/load/tls.sh` runs it).
pub(crate) fn hyper() -> Process {
    Process::new(
        "hyper-bin",
        Program::Workspace {
            package: "bufslab-benches",
            bin: "hyper_baseline",
        },
        ["--addr", "127.0.0.1:{port}", "--workers", "1"],
    )
    // The same server as the in-process subject: the same scenarios.
    .scenarios(|s| Hyper.applies_to(s))
    .https(TLS_ARGS)
}

/// The load harness's may-minihttp baseline binary, one worker thread. It serves
/// `/plaintext` and `/json` (404 otherwise) and has no echo.
pub(crate) fn may_minihttp() -> Process {
    Process::new(
        "may-minihttp-bin",
        Program::Workspace {
            package: "bufslab-benches",
            bin: "may_baseline",
        },
        ["--addr", "127.0.0.1:{port}", "--workers", "1"],
    )
    .scenarios(serves_plaintext_and_json)
}

/// bufslab's own WebSocket echo server under `io`, one worker: bufslab-server's `ws_echo`
/// example (the server `benches/load/ws.sh` measures), named `bufslab-ws-bin-<io>`. Only the
/// WebSocket scenarios apply; it upgrades on `/ws`, where the client asks.
pub(crate) fn bufslab_ws(io: IoMode) -> Process {
    bufslab_binary("bufslab-ws-bin", "bufslab-server", "ws_echo", io)
        .scenarios(|s| s.websocket_payload().is_some())
}

/// A peer WebSocket echo server of the load harness as a binary (`ws_tungstenite`,
/// `ws_fastwebsockets`), one worker, named `<name>`: the same server as the in-process
/// `ws-<peer>` subject, counted by the preloaded counter beside `bufslab-ws-bin-*`.
pub(crate) fn ws_peer(name: &'static str, bin: &'static str) -> Process {
    Process::new(
        name,
        Program::Workspace {
            package: "bufslab-benches",
            bin,
        },
        ["--addr", "127.0.0.1:{port}", "--workers", "1"],
    )
    .scenarios(|s| s.websocket_payload().is_some())
}

/// The scenarios a server that serves `/plaintext` and `/json` (404 otherwise) answers,
/// without an echo and without answering a malformed head.
fn serves_plaintext_and_json(s: Scenario) -> bool {
    matches!(
        s,
        Scenario::Plaintext
            | Scenario::Json
            | Scenario::Pipelined
            | Scenario::NotFound
            | Scenario::ConnectClose
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_sockets_on_the_port() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000
   1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000
   2: 0100007F:D2F0 0100007F:1F90 01 00000000:00000000 00:00000000 00000000
   3: 0100007F:1F90 0100007F:D2F2 08 00000000:00000000 00:00000000 00000000
   4: 0100007F:1F90 0100007F:D2F4 06 00000000:00000000 00:00000000 00000000
";
        // The listener (0A), the client's own end (local D2F0) and TIME_WAIT (06) do not count.
        assert_eq!(open_on_port(table, 8080), 2);
        assert_eq!(open_on_port(table, 8081), 0);
    }

    #[test]
    fn specs() {
        let p = Process::from_spec("mine=./srv --port {port} -t 1").unwrap();
        assert_eq!(p.name, "mine");
        assert_eq!(p.args, ["--port", "{port}", "-t", "1"]);
        assert!(Process::from_spec("./srv --port {port}").is_err());
        assert!(Process::from_spec("mine=").is_err());
        assert!(Process::from_spec("mine=./srv --port 8080").is_err());
    }
}
