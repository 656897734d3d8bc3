//! The connection core under arbitrary byte streams, split at arbitrary points, with arbitrary
//! timer, send-size, pool and shutdown events: see `bufslab_server::fuzzing` for the script
//! format and what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bufslab_server::fuzzing::run(data));
