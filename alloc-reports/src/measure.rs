//! Running one scenario against a fresh server of a [`Subject`] and counting the heap in its
//! measured window.
//!
//! The window is bracketed by two [`dhat::HeapStats`] snapshots. Everything between them must
//! not allocate on the client side (see [`crate::client`]); samples of the running count go
//! into a `Vec` reserved before the window, and progress is reported only outside it.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bufslab_benches::{LoadError, WsClient};
use serde::Serialize;
use server_demo::PoolStats;

use crate::certificate::{self, CertificateError};
use crate::client::{Client, ClientError, ClientTls, Response};
use crate::scenario::{Expected, Scenario, Shape};
use crate::subject::{Running, Subject, SubjectError};

/// Points of the cumulative-allocation curve per scenario (plus the origin).
const SAMPLES: u64 = 200;

/// Receive buffer of the client: a pipelined batch of responses, or what a 64 KiB echo can
/// have in flight while its request is still being written, with room to spare.
const CLIENT_BUFFER: usize = 512 * 1024;

/// How long the server may take to notice closed connections after the last response.
const SETTLE: Duration = Duration::from_secs(10);

/// How long the window waits for a server that does not count its connections
/// ([`Running::open_connections`]) to notice a close.
pub const GRACE: Duration = Duration::from_millis(100);

/// How much of a scenario to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Measured requests; `None`: the scenario's [`default_requests`](Scenario::default_requests).
    pub requests: Option<u64>,
    /// Requests before the window, to fill the pool's caches and the server's lazy state.
    pub warmup: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            requests: None,
            warmup: 200,
        }
    }
}

/// Where a scenario's dhat profile goes.
#[derive(Clone, Copy, Debug)]
pub enum Profile<'a> {
    /// dhat's testing mode: statistics only, no file.
    Testing,
    /// A profile file written when the scenario ends, for `dh_view.html`.
    File(&'a Path),
}

/// How a subject's allocations are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// dhat as this process's global allocator, the server running in this process: exact
    /// per call site, with a profile and backtraces for each run.
    Dhat,
    /// The preloaded counter (`LD_PRELOAD`, [`crate::subject::Process`]) in the server's
    /// own process: every allocation through the C heap, any language, counts only.
    Preload,
}

impl Method {
    /// The name in the report's `counted by` column.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Method::Dhat => "dhat",
            Method::Preload => "preload",
        }
    }
}

/// A heap's counters at one moment, as dhat's [`dhat::HeapStats`] has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapCounts {
    /// Allocations so far (a `realloc` of a live block is one).
    pub total_blocks: u64,
    /// Bytes those allocations asked for.
    pub total_bytes: u64,
    /// The largest live heap so far, in bytes.
    pub max_bytes: usize,
    /// Live blocks at that peak.
    pub max_blocks: usize,
}

impl From<dhat::HeapStats> for HeapCounts {
    fn from(h: dhat::HeapStats) -> Self {
        HeapCounts {
            total_blocks: h.total_blocks,
            total_bytes: h.total_bytes,
            max_bytes: h.max_bytes,
            max_blocks: h.max_blocks,
        }
    }
}

/// A point of the cumulative-allocation curve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// Requests answered since the window opened.
    pub requests: u64,
    /// Allocations since the window opened.
    pub allocations: u64,
}

/// What one scenario measured.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// The subject's name: which server.
    pub subject: String,
    /// The scenario's name.
    pub scenario: &'static str,
    /// What it does.
    pub description: &'static str,
    /// The pool's free list, for a server built on bufslab.
    pub strategy: Option<&'static str>,
    /// The server's I/O driver, for a server that has a choice.
    pub driver: Option<&'static str>,
    /// How the allocations were counted.
    pub method: Method,
    /// Warm-up requests, before the window.
    pub warmup: u64,
    /// Requests in the window.
    pub requests: u64,
    /// New connections in the window (0 for keep-alive scenarios).
    pub connections: u64,
    /// Heap allocations in the window, all threads.
    pub allocations: u64,
    /// Bytes those allocations asked for.
    pub bytes: u64,
    /// Peak live heap bytes since the server started (pool slabs included).
    pub peak_heap_bytes: usize,
    /// Live heap blocks at that peak.
    pub peak_heap_blocks: usize,
    /// The pool after the window, for a server built on bufslab.
    pub pool: Option<PoolStats>,
    /// Gets that found a free list empty, during the window, for a server built on bufslab.
    pub pool_misses: Option<u64>,
    /// Length of the window.
    pub window_secs: f64,
    /// The cumulative-allocation curve over the window.
    pub samples: Vec<Sample>,
    /// The file name of the dhat profile written for this scenario, if any.
    pub profile: Option<PathBuf>,
}

impl Measurement {
    /// Allocations per request in the window.
    #[must_use]
    pub fn allocations_per_request(&self) -> f64 {
        ratio(self.allocations, self.requests)
    }

    /// Bytes allocated per request in the window.
    #[must_use]
    pub fn bytes_per_request(&self) -> f64 {
        ratio(self.bytes, self.requests)
    }

    /// Allocations per new connection, for scenarios that open connections in the window.
    #[must_use]
    pub fn allocations_per_connection(&self) -> Option<f64> {
        (self.connections > 0).then(|| ratio(self.allocations, self.connections))
    }
}

fn ratio(n: u64, d: u64) -> f64 {
    n as f64 / d.max(1) as f64
}

/// Why a scenario could not be measured.
#[derive(Debug)]
pub enum MeasureError {
    /// The scenario does not apply to the subject ([`Subject::applies_to`]).
    NotApplicable,
    /// The server did not start or stop cleanly.
    Server(SubjectError),
    /// An exchange failed.
    Client(ClientError),
    /// A WebSocket exchange failed: the upgrade, a frame, or an echo that differs.
    WebSocket(LoadError),
    /// A response was not what the scenario expects.
    Unexpected {
        /// The scenario's expectation.
        expected: Expected,
        /// What came back.
        got: Response,
    },
    /// The server did not finish closing connections in time.
    Stalled,
    /// A subject counted by [`Method::Preload`] whose server gave no counts
    /// ([`Running::heap`]).
    NoCounts,
    /// The certificate of the HTTPS scenarios could not be made.
    Certificate(CertificateError),
}

impl fmt::Display for MeasureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeasureError::NotApplicable => {
                f.write_str("the scenario does not apply to this server")
            }
            MeasureError::Server(e) => write!(f, "server: {e}"),
            MeasureError::Client(e) => write!(f, "client: {e}"),
            MeasureError::WebSocket(e) => write!(f, "WebSocket client: {e}"),
            MeasureError::Unexpected { expected, got } => write!(
                f,
                "expected status {} (close: {}), got {} (close: {}, {} body bytes)",
                expected.status, expected.close, got.status, got.close, got.body_len
            ),
            MeasureError::Stalled => write!(
                f,
                "the server still had connections open {} s after the last response",
                SETTLE.as_secs()
            ),
            MeasureError::NoCounts => f.write_str(
                "the server's process gave no allocation counts (was the counter preloaded?)",
            ),
            MeasureError::Certificate(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MeasureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MeasureError::Server(e) => Some(e.as_ref()),
            MeasureError::Client(e) => Some(e),
            MeasureError::WebSocket(e) => Some(e),
            MeasureError::Certificate(e) => Some(e),
            MeasureError::NotApplicable
            | MeasureError::Unexpected { .. }
            | MeasureError::Stalled
            | MeasureError::NoCounts => None,
        }
    }
}

impl From<LoadError> for MeasureError {
    fn from(e: LoadError) -> Self {
        MeasureError::WebSocket(e)
    }
}

impl From<ClientError> for MeasureError {
    fn from(e: ClientError) -> Self {
        MeasureError::Client(e)
    }
}

/// A stage of a scenario, reported to the progress callback between windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Warm-up done; the value is the warm-up requests.
    WarmedUp(u64),
    /// Window done; the value is the measured requests.
    Measured(u64),
}

/// Runs `scenario` against a fresh server of `subject` under a dhat profiler of kind
/// `profile`, built here and handed to `end` before returning (`drop` it there: that ends it
/// and writes the profile file; the binary drops it with its progress bar suspended, since
/// dhat reports on stderr); `progress` hears of each stage. A subject counted by
/// [`Method::Preload`] runs without a profiler (this process's allocations are the client's,
/// and dhat would record a backtrace for each), and `end` is not called.
///
/// # Errors
/// [`MeasureError`] when the scenario does not apply, or the server or an exchange fails.
///
/// # Panics
/// When another dhat profiler is running.
pub fn run_profiled(
    subject: &dyn Subject,
    scenario: Scenario,
    options: Options,
    profile: Profile<'_>,
    progress: &mut dyn FnMut(Stage),
    end: impl FnOnce(dhat::Profiler),
) -> Result<Measurement, MeasureError> {
    if !subject.applies_to(scenario) {
        return Err(MeasureError::NotApplicable);
    }
    let prepared = Prepared::new(scenario, options)?;
    if subject.method() == Method::Preload {
        return prepared.run(subject, progress);
    }
    let profiler = start_profiler(profile);
    let result = prepared.run(subject, progress);
    // The server's threads are gone by now, so the profile holds all of their allocations.
    end(profiler);
    result.map(|m| with_profile(m, profile))
}

/// Starts a dhat profiler of kind `profile`; dropping it ends it (and writes the file).
///
/// # Panics
/// When another dhat profiler is running.
#[must_use]
fn start_profiler(profile: Profile<'_>) -> dhat::Profiler {
    // dhat's default of 10 frames is mostly allocator internals; 16 reach the caller's caller.
    let builder = dhat::Profiler::builder().trim_backtraces(Some(16));
    match profile {
        Profile::Testing => builder.testing().build(),
        Profile::File(path) => builder.file_name(path).build(),
    }
}

/// Records in `m` the profile it was written to.
#[must_use]
fn with_profile(mut m: Measurement, profile: Profile<'_>) -> Measurement {
    if let Profile::File(path) = profile {
        // The name alone: the report sits beside its profiles, wherever it is moved.
        m.profile = path.file_name().map(PathBuf::from);
    }
    m
}

/// A scenario with its client side built: the receive buffer, the request bytes and room
/// for the samples. Built before the profiler starts, so that the profile and the peak heap
/// are the server's alone.
#[derive(Debug)]
struct Prepared {
    scenario: Scenario,
    client: Client,
    /// The WebSocket client, for a WebSocket scenario; `request` is then its payload.
    ws: Option<WsClient>,
    request: Vec<u8>,
    expected: Expected,
    samples: Vec<Sample>,
    warm_writes: u64,
    writes: u64,
    step: u64,
}

/// The writes `scenario` makes under `options`: (warm-up, measured). Requests are these times
/// [`Scenario::per_write`]: warm-up rounds up to whole batches, the window down (at least one).
#[must_use]
pub fn planned_writes(scenario: Scenario, options: Options) -> (u64, u64) {
    let per_write = scenario.per_write();
    let requests = options
        .requests
        .unwrap_or_else(|| scenario.default_requests());
    (
        options.warmup.div_ceil(per_write),
        (requests / per_write).max(1),
    )
}

impl Prepared {
    /// Builds everything the client side of `scenario` needs.
    ///
    /// # Errors
    /// For an HTTPS scenario, when the certificate or the TLS client cannot be made.
    fn new(scenario: Scenario, options: Options) -> Result<Prepared, MeasureError> {
        let (warm_writes, writes) = planned_writes(scenario, options);
        let step = (writes / SAMPLES).max(1);
        let client = match scenario.https() {
            Some(https) => {
                let cert = certificate::localhost().map_err(MeasureError::Certificate)?;
                let resume = https.exchange.resumed() == Some(true);
                let tls = ClientTls::new(cert.der.clone(), https.suite, resume)?;
                Client::with_tls(CLIENT_BUFFER, tls)
            }
            None => Client::new(CLIENT_BUFFER),
        };
        Ok(Prepared {
            scenario,
            client,
            ws: scenario.websocket_payload().map(WsClient::new),
            request: scenario.request(),
            expected: scenario.expected(),
            samples: Vec::with_capacity(usize::try_from(writes / step + 2).unwrap_or(0)),
            warm_writes,
            writes,
            step,
        })
    }

    /// Runs the scenario against a fresh server, under the dhat profiler the caller started,
    /// and calls `progress` after warm-up and after the window (never inside it).
    ///
    /// # Errors
    /// [`MeasureError`] when the server or an exchange fails.
    ///
    /// # Panics
    /// When no dhat profiler is running. dhat must be the global allocator, or every count
    /// is 0.
    fn run(
        mut self,
        subject: &dyn Subject,
        progress: &mut dyn FnMut(Stage),
    ) -> Result<Measurement, MeasureError> {
        let scenario = self.scenario;
        let server = subject.start(scenario).map_err(MeasureError::Server)?;
        let addr = server.local_addr();
        let per_write = scenario.per_write();

        if let Some(ws) = &mut self.ws {
            // Upgraded once, before warm-up: the window holds messages only. `/ws` is where
            // bufslab-server's ws_echo example upgrades; the peers upgrade on any path.
            ws.connect(addr, "/ws")?;
        } else if scenario.shape() == Shape::KeepAlive {
            self.client.connect(addr)?;
        }
        if scenario.https().and_then(|h| h.exchange.resumed()) == Some(true) {
            // A first connection, full, for the ticket the next one resumes with: with or
            // without warm-up, every connection after it resumes.
            self.once(addr)?;
        }
        for _ in 0..self.warm_writes {
            self.once(addr)?;
        }
        settle(server.as_ref(), self.kept_open())?;
        progress(Stage::WarmedUp(self.warm_writes * per_write));

        let method = subject.method();
        let heap = || match method {
            Method::Dhat => Ok(HeapCounts::from(dhat::HeapStats::get())),
            Method::Preload => server.heap().ok_or(MeasureError::NoCounts),
        };
        let misses_before = server.pool().map(|p| p.misses);
        let started = Instant::now();
        let before = heap()?;
        self.samples.push(Sample::default());
        for i in 1..=self.writes {
            self.once(addr)?;
            if i % self.step == 0 && i < self.writes {
                let now = heap()?;
                self.samples.push(Sample {
                    requests: i * per_write,
                    allocations: now.total_blocks - before.total_blocks,
                });
            }
        }
        // A closed connection is the server's work too: wait for it inside the window.
        settle(server.as_ref(), self.kept_open())?;
        let after = heap()?;
        let window = started.elapsed();
        let pool_misses = server
            .pool()
            .zip(misses_before)
            .map(|(p, before)| p.misses - before);
        let requests = self.writes * per_write;
        let allocations = after.total_blocks - before.total_blocks;
        self.samples.push(Sample {
            requests,
            allocations,
        });
        progress(Stage::Measured(requests));

        // Read the pool once every connection is gone: a block still rented then is a leak.
        self.client.close();
        if let Some(ws) = &mut self.ws {
            ws.close()?;
        }
        settle(server.as_ref(), 0)?;
        let pool = server.pool();
        let strategy = server.free_list();
        let driver = server.driver();
        server.stop().map_err(MeasureError::Server)?;
        Ok(Measurement {
            subject: subject.name().to_owned(),
            scenario: scenario.name(),
            description: scenario.description(),
            strategy,
            driver,
            method,
            warmup: self.warm_writes * per_write,
            requests,
            connections: match scenario.shape() {
                Shape::KeepAlive => 0,
                Shape::PerConnection => self.writes,
            },
            allocations,
            bytes: after.total_bytes - before.total_bytes,
            peak_heap_bytes: after.max_bytes,
            peak_heap_blocks: after.max_blocks,
            pool,
            pool_misses,
            window_secs: window.as_secs_f64(),
            samples: self.samples,
            profile: None,
        })
    }

    /// Connections the client keeps open between exchanges.
    fn kept_open(&self) -> u64 {
        match self.scenario.shape() {
            Shape::KeepAlive => 1,
            Shape::PerConnection => 0,
        }
    }

    /// One write's worth of exchange: a request (or a pipelined batch) and its responses,
    /// on a new connection where the scenario asks for one.
    fn once(&mut self, addr: SocketAddr) -> Result<(), MeasureError> {
        if let Some(ws) = &mut self.ws {
            ws.echo(&self.request, self.scenario.websocket_text())?;
            return Ok(());
        }
        let shape = self.scenario.shape();
        if shape == Shape::PerConnection {
            self.client.connect(addr)?;
        }
        self.client.send(&self.request)?;
        for _ in 0..self.scenario.per_write() {
            let got = self.client.read_response()?;
            if !self.expected.matches(&got) {
                return Err(MeasureError::Unexpected {
                    expected: self.expected,
                    got,
                });
            }
        }
        if self.expected.close {
            self.client.expect_eof()?;
        }
        if shape == Shape::PerConnection {
            self.client.close();
        }
        Ok(())
    }
}

/// Waits until the server has exactly `open` connections, i.e. has seen every close; for a
/// server that does not count them, waits [`GRACE`].
fn settle(server: &dyn Running, open: u64) -> Result<(), MeasureError> {
    if server.open_connections().is_none() {
        std::thread::sleep(GRACE);
        return Ok(());
    }
    let since = Instant::now();
    while server.open_connections() != Some(open) {
        if since.elapsed() > SETTLE {
            return Err(MeasureError::Stalled);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}
