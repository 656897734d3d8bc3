//! The zero-allocation gate, for a server author's own test: every scenario that applies to
//! a [`Subject`], few requests each, and a verdict that fails on any allocation per
//! keep-alive request or beyond a bound per new connection.
//!
//! This is what `tests/steady_state.rs` runs against server-demo. A crate that wants the same
//! promise for its own server adds `alloc-reports` (and `dhat`) as dev-dependencies,
//! implements [`Subject`] for its server (in process, counted by dhat, or a binary through
//! [`Process`](crate::subject::Process)), and calls [`Gate::check`] from one test:
//!
//! ```no_run
//! use alloc_reports::gate::Gate;
//! use alloc_reports::subject::{Process, Program};
//!
//! // dhat must be the test binary's global allocator (the in-process window reads it).
//! #[global_allocator]
//! static ALLOC: dhat::Alloc = dhat::Alloc;
//!
//! // A test function in the crate's `tests/` (one such test per test binary: dhat runs one
//! // profiler at a time). An integration test of the server's own package names its binary
//! // with `env!("CARGO_BIN_EXE_my-server")`.
//! fn my_server_allocates_nothing_per_request() {
//!     let server = Process::new(
//!         "my-server",
//!         Program::Path("target/release/my-server".into()),
//!         ["--listen", "127.0.0.1:{port}"],
//!     );
//!     Gate::default().check(&server).expect("measured").assert_passed();
//! }
//! ```

use std::fmt;

use crate::measure::{self, MeasureError, Measurement, Options, Profile};
use crate::scenario::{
    Scenario, Shape, ALLOCS_PER_CONNECTION_BOUND, ALLOCS_PER_FULL_HANDSHAKE_BOUND,
    ALLOCS_PER_RESUMED_HANDSHAKE_BOUND,
};
use crate::subject::Subject;

/// How much of each scenario the gate runs, and what it allows.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Gate {
    /// Measured requests per keep-alive scenario.
    pub requests: u64,
    /// Measured connections (one request each) per per-connection scenario.
    pub connections: u64,
    /// Requests before each window: they fill caches and lazy state.
    pub warmup: u64,
    /// Allocations allowed per new connection (server-demo's gate: 0).
    pub per_connection_bound: f64,
    /// Allocations allowed per new HTTPS connection with a full handshake (server-demo's
    /// gate: [`ALLOCS_PER_FULL_HANDSHAKE_BOUND`]).
    pub per_full_handshake_bound: f64,
    /// Allocations allowed per new HTTPS connection with a resumed handshake (server-demo's
    /// gate: [`ALLOCS_PER_RESUMED_HANDSHAKE_BOUND`]).
    pub per_resumed_handshake_bound: f64,
}

impl Default for Gate {
    /// Small enough for a test on two cores, large enough that an allocation per request or
    /// per connection cannot hide: 200 requests, 50 connections, 50 of warm-up, and server-demo's
    /// bounds: [`ALLOCS_PER_CONNECTION_BOUND`] per new connection, and over HTTPS
    /// [`ALLOCS_PER_FULL_HANDSHAKE_BOUND`] and [`ALLOCS_PER_RESUMED_HANDSHAKE_BOUND`].
    fn default() -> Self {
        Gate {
            requests: 200,
            connections: 50,
            warmup: 50,
            per_connection_bound: ALLOCS_PER_CONNECTION_BOUND,
            per_full_handshake_bound: ALLOCS_PER_FULL_HANDSHAKE_BOUND,
            per_resumed_handshake_bound: ALLOCS_PER_RESUMED_HANDSHAKE_BOUND,
        }
    }
}

impl Gate {
    /// Allows `bound` allocations per new connection.
    #[must_use]
    pub fn per_connection_bound(mut self, bound: f64) -> Gate {
        self.per_connection_bound = bound;
        self
    }

    /// Allows `full` allocations per new HTTPS connection with a full handshake and `resumed`
    /// per one with a resumed handshake.
    #[must_use]
    pub fn per_handshake_bounds(mut self, full: f64, resumed: f64) -> Gate {
        self.per_full_handshake_bound = full;
        self.per_resumed_handshake_bound = resumed;
        self
    }

    /// What one new connection of `scenario` may allocate.
    fn bound(&self, scenario: Scenario) -> f64 {
        match scenario.https().and_then(|h| h.exchange.resumed()) {
            Some(false) => self.per_full_handshake_bound,
            Some(true) => self.per_resumed_handshake_bound,
            None => self.per_connection_bound,
        }
    }

    /// Runs every scenario that applies to `subject` ([`Subject::applies_to`]), one after
    /// another, each under a dhat profiler in testing mode.
    ///
    /// # Errors
    /// [`GateError`] when a scenario cannot be measured (the server fails to start, answers
    /// otherwise than the scenario expects, or never closes), or the counter saw no heap at
    /// all (dhat is not the global allocator, or a preloaded counter is not counting), since
    /// every zero would then be vacuous.
    ///
    /// # Panics
    /// When another dhat profiler is running (dhat allows one at a time).
    pub fn check(&self, subject: &dyn Subject) -> Result<Verdict, GateError> {
        let scenarios: Vec<Scenario> = Scenario::ALL
            .into_iter()
            .filter(|&s| subject.applies_to(s))
            .collect();
        self.check_scenarios(subject, &scenarios)
    }

    /// As [`check`](Self::check), over `scenarios` only.
    ///
    /// # Errors
    /// As [`check`](Self::check); a scenario that does not apply is an error too.
    ///
    /// # Panics
    /// As [`check`](Self::check).
    pub fn check_scenarios(
        &self,
        subject: &dyn Subject,
        scenarios: &[Scenario],
    ) -> Result<Verdict, GateError> {
        let mut verdict = Verdict {
            measurements: Vec::with_capacity(scenarios.len()),
            failures: Vec::new(),
        };
        for &scenario in scenarios {
            let requests = match scenario.shape() {
                Shape::KeepAlive => self.requests,
                Shape::PerConnection => self.connections,
            };
            let options = Options {
                requests: Some(requests),
                warmup: self.warmup,
            };
            let m = measure::run_profiled(
                subject,
                scenario,
                options,
                Profile::Testing,
                &mut |_| {},
                drop,
            )
            .map_err(|error| GateError::Measure {
                subject: subject.name().to_owned(),
                scenario,
                error,
            })?;
            if m.peak_heap_bytes == 0 {
                return Err(GateError::NothingCounted {
                    subject: subject.name().to_owned(),
                    scenario,
                });
            }
            match m.allocations_per_connection() {
                None if m.allocations > 0 => verdict.failures.push(Failure::PerRequest {
                    subject: m.subject.clone(),
                    scenario,
                    allocations: m.allocations,
                    requests: m.requests,
                    bytes: m.bytes,
                }),
                Some(per) if per > self.bound(scenario) => {
                    verdict.failures.push(Failure::PerConnection {
                        subject: m.subject.clone(),
                        scenario,
                        per_connection: per,
                        bound: self.bound(scenario),
                    });
                }
                _ => {}
            }
            verdict.measurements.push(m);
        }
        Ok(verdict)
    }
}

/// What a [`Gate`] measured, and what failed it.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// One measurement per scenario, in the order run.
    pub measurements: Vec<Measurement>,
    /// The scenarios that allocated beyond what the gate allows.
    pub failures: Vec<Failure>,
}

impl Verdict {
    /// Whether nothing failed.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Panics, listing every failure, unless the verdict [`passed`](Self::passed): the
    /// assertion of a test.
    ///
    /// # Panics
    /// When a scenario failed.
    #[track_caller]
    pub fn assert_passed(&self) {
        assert!(self.passed(), "{self}");
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.passed() {
            return write!(f, "{} scenarios, no allocation", self.measurements.len());
        }
        writeln!(
            f,
            "allocations in steady state (see where with a dhat profile: \
             `cargo run --release -p alloc-reports -- --scenario NAME --subject SUBJECT`):"
        )?;
        for failure in &self.failures {
            writeln!(f, "  {failure}")?;
        }
        Ok(())
    }
}

/// A scenario that allocated beyond what the gate allows.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Failure {
    /// A keep-alive scenario allocated in its window.
    PerRequest {
        /// The subject's name.
        subject: String,
        /// The scenario.
        scenario: Scenario,
        /// Allocations in the window.
        allocations: u64,
        /// Requests in the window.
        requests: u64,
        /// Bytes those allocations asked for.
        bytes: u64,
    },
    /// A per-connection scenario allocated more per new connection than the bound.
    PerConnection {
        /// The subject's name.
        subject: String,
        /// The scenario.
        scenario: Scenario,
        /// Allocations per new connection.
        per_connection: f64,
        /// The gate's bound.
        bound: f64,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::PerRequest {
                subject,
                scenario,
                allocations,
                requests,
                bytes,
            } => write!(
                f,
                "{subject} {}: {allocations} allocations in {requests} keep-alive requests \
                 ({bytes} bytes)",
                scenario.name()
            ),
            Failure::PerConnection {
                subject,
                scenario,
                per_connection,
                bound,
            } => write!(
                f,
                "{subject} {}: {per_connection} allocations per new connection, bound {bound}",
                scenario.name()
            ),
        }
    }
}

/// Why the gate could not give a verdict.
#[derive(Debug)]
#[non_exhaustive]
pub enum GateError {
    /// A scenario could not be measured.
    Measure {
        /// The subject's name.
        subject: String,
        /// The scenario.
        scenario: Scenario,
        /// Why.
        error: MeasureError,
    },
    /// The counter saw no heap at all during a scenario, not even the server's start-up.
    NothingCounted {
        /// The subject's name.
        subject: String,
        /// The scenario.
        scenario: Scenario,
    },
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateError::Measure {
                subject,
                scenario,
                error,
            } => write!(f, "{subject}, {}: {error}", scenario.name()),
            GateError::NothingCounted { subject, scenario } => write!(
                f,
                "{subject}, {}: no heap was counted at all, not even the server's start-up \
                 (is dhat the global allocator?); a zero would prove nothing",
                scenario.name()
            ),
        }
    }
}

impl std::error::Error for GateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GateError::Measure { error, .. } => Some(error),
            GateError::NothingCounted { .. } => None,
        }
    }
}
