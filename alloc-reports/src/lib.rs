//! `alloc-reports`: heap allocations per request of HTTP servers, per scenario, counted by
//! dhat: server-demo, and beside it hyper or any other server that runs in process.
//!
//! Each [`Scenario`] runs against a fresh in-process server of each [`Subject`] (a server that
//! alloc-reports can start on a free port and stop: server-demo and the hyper baseline are
//! built in, see [`subject`]) with a client that allocates nothing once built, so dhat's
//! process-wide counts between two snapshots are the server's own. The binary writes the
//! table, a JSON copy, one dhat profile per run and a chart; the `steady_state` test runs the
//! same scenarios against server-demo, under each I/O driver, with few requests and fails on
//! any allocation per request.
//!
//! dhat must be the global allocator of whatever links this library, and allows one profiler
//! at a time: [`measure::run_profiled`] builds one per scenario (for a subject counted in
//! process; a server binary's counts come from its own process) and drops it before returning
//! (the binary does the same by hand, to keep dhat's messages clear of its progress bar).
//!
//! ```no_run
//! use alloc_reports::measure::{self, Options, Profile};
//! use alloc_reports::subject::ServerDemo;
//! use alloc_reports::Scenario;
//!
//! #[global_allocator]
//! static ALLOC: dhat::Alloc = dhat::Alloc;
//!
//! let subject = ServerDemo::default();
//! let m = measure::run_profiled(&subject, Scenario::Json, Options::default(), Profile::Testing, &mut |_| {}, drop)?;
//! assert_eq!(m.allocations, 0);
//! # Ok::<(), alloc_reports::measure::MeasureError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

pub mod certificate;
pub mod chart;
pub mod cli;
pub mod client;
pub mod gate;
pub mod machine;
pub mod measure;
pub mod report;
pub mod run;
pub mod scenario;
pub mod subject;

pub use scenario::{Scenario, Shape};
pub use subject::{Running, Subject};
