//! The TLS layer between a driver and the connection core, under a rustls client whose records
//! arrive split at arbitrary points, with pool exhaustion, key updates and either end's close:
//! see `bufslab_server::fuzzing::run_tls` for the script format and what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bufslab_server::fuzzing::run_tls(data));
