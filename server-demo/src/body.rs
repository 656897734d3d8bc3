//! Consuming a request body: echoing it into the output, or skipping it unread.
//!
//! A body step takes input bytes and, for `/echo`, writes the decoded data into the output
//! queue; it never reads or writes a socket. What the connection does when a body turns out
//! malformed or too large depends on whether its response has started going out, so the body
//! keeps track of that too ([`Body::unsent_from`]).

use bufslab::{FreeList, LocalCache};
use bufslab_http::{write_chunk, write_last_chunk, BodyDecoder, BodyFraming, DateCache};
use bytes::BufMut;

use crate::out_queue::{Blocked, OutQueue};
use crate::routes::{self, Persist, Reply};

/// How a body is consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyUse {
    /// `/echo` with Content-Length: copy the data through.
    EchoLength,
    /// `/echo` with chunked framing: re-chunk the data as it is decoded. The 200 head waits
    /// (`Some`) for the first decoded bytes, so a body that fails before any data went out
    /// still gets its 400 or 413.
    EchoChunked(Option<Persist>),
    /// Anything else: skip it without looking.
    Skip,
}

/// Why a body cannot be consumed further: the status its request earns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyFault {
    /// The chunked framing is malformed: 400.
    Malformed,
    /// More than `--max-body` bytes: 413.
    TooLarge,
}

impl BodyFault {
    /// The status that answers it when no byte of the response has gone out.
    pub(crate) fn status(self) -> u16 {
        match self {
            BodyFault::Malformed => 400,
            BodyFault::TooLarge => 413,
        }
    }
}

/// Why a body step stopped short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyStop {
    /// No output room: send, or wait for the pool.
    Blocked(Blocked),
    /// The body cannot go on.
    Fault(BodyFault),
}

impl From<Blocked> for BodyStop {
    fn from(b: Blocked) -> Self {
        BodyStop::Blocked(b)
    }
}

/// The body of the request being served.
#[derive(Clone, Debug)]
pub(crate) struct Body {
    decoder: BodyDecoder,
    using: BodyUse,
    /// Bytes taken so far (data for an echo, framing included for a skip).
    received: u64,
    /// While no byte of this request's response has been sent: how many queued output bytes
    /// come before it (responses to earlier pipelined requests). `None` once some went out.
    unsent_from: Option<usize>,
}

impl Body {
    /// A body with `framing`, consumed as `using`, whose response starts after `unsent_from`
    /// queued bytes.
    pub(crate) fn new(framing: BodyFraming, using: BodyUse, unsent_from: usize) -> Body {
        Body {
            decoder: BodyDecoder::new(framing),
            using,
            received: 0,
            unsent_from: Some(unsent_from),
        }
    }

    /// `n` output bytes were sent: up to `unsent_from` of them were earlier responses; any
    /// more were this one's, which can then no longer be taken back.
    pub(crate) fn sent(&mut self, n: usize) {
        self.unsent_from = self.unsent_from.and_then(|m| m.checked_sub(n));
    }

    /// See the field: `Some` while the response can still be taken back.
    pub(crate) fn unsent_from(&self) -> Option<usize> {
        self.unsent_from
    }

    /// Consumes body bytes from `input`: echoes them into `out`, or skips them. Returns the
    /// input bytes used and whether the body is complete.
    pub(crate) fn step<F: FreeList>(
        &mut self,
        input: &[u8],
        out: &mut OutQueue,
        cache: &LocalCache<F>,
        date: &DateCache,
        max_body: u64,
    ) -> Result<(usize, bool), BodyStop> {
        if self.using == BodyUse::Skip {
            let (n, done) = self
                .decoder
                .skip(input)
                .map_err(|_| BodyStop::Fault(BodyFault::Malformed))?;
            self.received += n as u64;
            if self.received > max_body {
                return Err(BodyStop::Fault(BodyFault::TooLarge));
            }
            return Ok((n, done));
        }
        // Feed the decoder only as much input as the output block can take, so the decoded
        // data always fits (chunk framing costs at most 24 bytes), with room for the deferred
        // 200 head when it is still to be written.
        let head_room = match self.using {
            BodyUse::EchoChunked(Some(_)) => routes::HEAD_ROOM,
            _ => 0,
        };
        let buf = out.reserve(cache, 64 + head_room)?;
        let room = buf.spare_capacity() - 32 - head_room;
        let input = input.get(..input.len().min(room)).unwrap_or_default();
        let step = self
            .decoder
            .decode(input)
            .map_err(|_| BodyStop::Fault(BodyFault::Malformed))?;
        self.received += step.data.len() as u64;
        if self.received > max_body {
            return Err(BodyStop::Fault(BodyFault::TooLarge));
        }
        if let BodyUse::EchoChunked(head) = &mut self.using {
            let pending = if step.data.is_empty() && !step.done {
                None
            } else {
                head.take()
            };
            if let Some(persist) = pending {
                let r = Reply {
                    date,
                    persist,
                    head_only: false,
                };
                routes::echo_head(buf, &r, None);
            }
            write_chunk(buf, step.data);
            if step.done {
                write_last_chunk(buf);
            }
        } else {
            buf.put_slice(step.data);
        }
        Ok((step.consumed, step.done))
    }
}
