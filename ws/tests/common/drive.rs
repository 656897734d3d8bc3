//! What the tests and the benchmarks share: a decoder run over a buffer of frames, and an
//! in-memory connection for tungstenite. Included by `common` and, by path, by the files that
//! do not take all of `common` (the benchmarks, the allocation count).
// Each includer uses its own part of this module.
#![allow(dead_code)]

use std::io::{self, Cursor, Read, Write};

use bufslab_ws::{Decoder, Event};

/// Decodes all of `buf`, which must hold valid frames (a frame may be cut at its end), handing
/// each event to `on_event`.
pub fn decode_each(dec: &mut Decoder, buf: &mut [u8], mut on_event: impl FnMut(Event<'_>)) {
    let mut at = 0;
    loop {
        let step = dec.decode(&mut buf[at..]).expect("valid frames");
        at += step.consumed;
        match step.event {
            None => break,
            Some(event) => on_event(event),
        }
    }
}

/// A connection whose peer sent its input and then closed; what is written to it is dropped.
pub struct Mem(Cursor<Vec<u8>>);

impl Mem {
    /// A connection whose peer sent `input`.
    pub fn sent(input: &[u8]) -> Self {
        Self(Cursor::new(input.to_vec()))
    }
}

impl Read for Mem {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Mem {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
