//! `alloc-reports`: heap allocations per request of server-demo, per scenario, counted by dhat.
//!
//! Each [`Scenario`] runs against a fresh in-process server (`server_demo::Server::start` on
//! port 0) with a client that allocates nothing once built, so dhat's process-wide counts
//! between two snapshots are the server's own. The binary writes the table, a JSON copy, one
//! dhat profile per scenario and a chart; the `steady_state` test runs the same scenarios
//! with few requests and fails on any allocation per request.
//!
//! dhat must be the global allocator of whatever links this library, and allows one profiler
//! at a time: [`measure::run_profiled`] builds one per scenario and drops it before returning
//! (the binary does the same by hand, to keep dhat's messages clear of its progress bar).
//!
//! ```no_run
//! use alloc_reports::measure::{self, Options, Profile};
//! use alloc_reports::Scenario;
//!
//! #[global_allocator]
//! static ALLOC: dhat::Alloc = dhat::Alloc;
//!
//! let m = measure::run_profiled(Scenario::Json, Options::default(), Profile::Testing, &mut |_| {}, drop)?;
//! assert_eq!(m.allocations, 0);
//! # Ok::<(), alloc_reports::measure::MeasureError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

pub mod chart;
pub mod cli;
pub mod client;
pub mod machine;
pub mod measure;
pub mod report;
pub mod scenario;

pub use scenario::{Scenario, Shape};
