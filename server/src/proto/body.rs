//! Consuming a request body: decoding it for the service, or skipping it unread.
//!
//! A body step takes input bytes and gives back the decoded data for the service; it never
//! reads or writes a socket. What the connection does when a body turns out malformed or too
//! large depends on whether its response has started going out, so the body keeps track of that
//! too ([`Body::unsent_from`]).

use bufslab_http::{BodyDecoder, BodyFraming};

/// How a body is consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyUse {
    /// Decoded and handed to the service, piece by piece.
    Deliver,
    /// Skipped without looking (the service did not ask for it).
    Skip,
}

/// Why a body cannot be consumed further: the status its request earns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyFault {
    /// The chunked framing is malformed: 400.
    Malformed,
    /// More than `--max-body` bytes, or than the service's limit for the request: 413.
    TooLarge,
    /// Slower than `Config::min_body_rate`: 408.
    TooSlow,
}

impl BodyFault {
    /// The status that answers it when no byte of the response has gone out.
    pub(crate) fn status(self) -> u16 {
        match self {
            BodyFault::Malformed => 400,
            BodyFault::TooLarge => 413,
            BodyFault::TooSlow => 408,
        }
    }
}

/// The body of the request being served.
#[derive(Clone, Debug)]
pub(crate) struct Body {
    decoder: BodyDecoder,
    using: BodyUse,
    /// Bytes taken so far (data for an echo, framing included for a skip).
    received: u64,
    /// `received` when the body's rate was last checked (`Config::min_body_rate`).
    checked: u64,
    /// Most data bytes delivered: `Config::max_body`, or less where the service asked
    /// ([`Exchange::read_body_limited`](crate::Exchange::read_body_limited)).
    limit: u64,
    /// While no byte of this request's response has been sent: how many queued output bytes
    /// come before it (responses to earlier pipelined requests). `None` once some went out.
    unsent_from: Option<usize>,
}

impl Body {
    /// A body with `framing`, consumed as `using` (at most `limit` data bytes when delivered),
    /// whose response starts after `unsent_from` queued bytes.
    pub(crate) fn new(
        framing: BodyFraming,
        using: BodyUse,
        unsent_from: usize,
        limit: u64,
    ) -> Body {
        Body {
            decoder: BodyDecoder::new(framing),
            using,
            received: 0,
            checked: 0,
            limit,
            unsent_from: Some(unsent_from),
        }
    }

    /// `n` output bytes were sent: up to `unsent_from` of them were earlier responses; any
    /// more were this one's, which can then no longer be taken back.
    pub(crate) fn sent(&mut self, n: usize) {
        self.unsent_from = self.unsent_from.and_then(|m| m.checked_sub(n));
    }

    /// Bytes taken since the last call.
    pub(crate) fn take_progress(&mut self) -> u64 {
        let moved = self.received - self.checked;
        self.checked = self.received;
        moved
    }

    /// See the field: `Some` while the response can still be taken back.
    pub(crate) fn unsent_from(&self) -> Option<usize> {
        self.unsent_from
    }

    /// How the body is consumed.
    pub(crate) fn using(&self) -> BodyUse {
        self.using
    }

    /// Skips body bytes of `input`. Returns the input bytes used and whether the body is
    /// complete.
    pub(crate) fn skip(&mut self, input: &[u8], max_body: u64) -> Result<(usize, bool), BodyFault> {
        let (n, done) = self.decoder.skip(input).map_err(|_| BodyFault::Malformed)?;
        self.received += n as u64;
        if self.received > max_body {
            return Err(BodyFault::TooLarge);
        }
        Ok((n, done))
    }

    /// Decodes body bytes of `input`: the data in it (a slice of `input`), the input bytes
    /// used, and whether the body is complete.
    pub(crate) fn decode<'i>(
        &mut self,
        input: &'i [u8],
    ) -> Result<(&'i [u8], usize, bool), BodyFault> {
        let step = self
            .decoder
            .decode(input)
            .map_err(|_| BodyFault::Malformed)?;
        self.received += step.data.len() as u64;
        if self.received > self.limit {
            return Err(BodyFault::TooLarge);
        }
        Ok((step.data, step.consumed, step.done))
    }
}
