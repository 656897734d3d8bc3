//! bufslab-tls (crate docs to come).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
pub mod handshake;
pub mod record;

pub use error::{AlertDescription, Error};
pub use handshake::{Config, ConfigBuilder, Connection, Handshake, Progress, Received, Status};
