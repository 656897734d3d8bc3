//! What the engine keeps of one request's exchange between the service's calls: where its
//! response is ([`Progress`]), the request's facts and the choices made ([`flag`]s), and the
//! token a deferred answer comes back with.

use crate::deferred::Deferred;
use crate::response_error::ResponseError;
#[cfg(doc)]
use crate::{Exchange, Response};

/// Where the response to the current request is. The two settled states come first, so that
/// telling them from the rest is one compare (`ExchangeState::is_settled`, on every turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Progress {
    /// Nothing written.
    NotStarted = 0,
    /// The response is complete.
    Done = 1,
    /// A head is being built ([`Response`] is alive, or was dropped unfinished).
    Head,
    /// Head written; `ExchangeState::left` body bytes are still to come.
    Length,
    /// Head written; a chunked body is being written.
    Chunked,
    /// Head written; the body ends when the connection closes (HTTP/1.0, length unknown).
    UntilClose,
    /// The service deferred its answer ([`Exchange::defer`]).
    Deferred,
    /// The answer to a deferred exchange arrived; the service is to write the response.
    Answered,
}

/// Facts of a request and choices made for its response, a bit each in
/// [`ExchangeState::flags`]: the common case (no body, the connection kept) is one load and one
/// compare away from the rest.
pub(crate) mod flag {
    /// A `HEAD` request: the response's body is dropped.
    pub(crate) const HEAD_ONLY: u16 = 1 << 0;
    pub(crate) const HTTP10: u16 = 1 << 1;
    /// The client asked to keep the connection open (or did not ask to close it).
    pub(crate) const KEEP_ALIVE: u16 = 1 << 2;
    /// The client waits for `100 Continue` (never set for HTTP/1.0).
    pub(crate) const EXPECT_CONTINUE: u16 = 1 << 3;
    pub(crate) const HAS_BODY: u16 = 1 << 4;
    /// The service asked for the body.
    pub(crate) const READS_BODY: u16 = 1 << 5;
    pub(crate) const CONTINUE_SENT: u16 = 1 << 6;
    /// The service or the server (shutting down) wants the connection closed after this.
    pub(crate) const CLOSE: u16 = 1 << 7;
    /// The rest of the body comes from [`Service::fill`](crate::Service::fill).
    pub(crate) const PULLING: u16 = 1 << 8;
    /// The service switched protocols: the connection is the service's once the `101` is
    /// queued.
    pub(crate) const UPGRADED: u16 = 1 << 9;
    /// The response offers an upgrade (`Response::offer_upgrade`): its `Connection` header
    /// carries the `upgrade` option.
    pub(crate) const OFFERS_UPGRADE: u16 = 1 << 10;
}

/// What the engine knows of the current request and its response, kept by the connection
/// across the service's calls.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExchangeState {
    pub(crate) progress: Progress,
    /// [`flag`]s.
    pub(crate) flags: u16,
    /// The first misuse, if any: the engine answers 500 (or closes) once the call returns.
    pub(crate) error: Option<ResponseError>,
    /// The connection slot and exchange number a [`Deferred`] token names: the slot's, kept
    /// across its exchanges and connections, so that a late answer never reaches a later one.
    pub(crate) slot: u32,
    pub(crate) gen: u32,
    /// With [`Progress::Length`]: body bytes still to come.
    pub(crate) left: u64,
    /// The most request body bytes the service takes
    /// ([`Exchange::read_body_limited`]; `u64::MAX`: `Config::max_body`).
    pub(crate) body_limit: u64,
    /// Queued output bytes before this response (earlier pipelined responses, and the
    /// `100 Continue`): what a 500 in its place truncates to.
    pub(crate) start: usize,
}

impl ExchangeState {
    /// Connection slot `slot`'s state before its first exchange.
    pub(crate) fn new(slot: usize) -> ExchangeState {
        ExchangeState {
            progress: Progress::NotStarted,
            flags: 0,
            error: None,
            slot: u32::try_from(slot).unwrap_or(u32::MAX),
            gen: 0,
            left: 0,
            body_limit: u64::MAX,
            start: 0,
        }
    }

    /// Starts the slot's next exchange, for a request with the [`flag`]s `facts` (of
    /// `HEAD_ONLY`, `HTTP10`, `KEEP_ALIVE`, `EXPECT_CONTINUE`, `HAS_BODY`, `CLOSE`), nothing
    /// answered yet.
    #[inline]
    pub(crate) fn begin(&mut self, facts: u16) {
        // A 1xx must not go to an HTTP/1.0 client (RFC 9110 §15.2): its expectation is ignored.
        let facts = if facts & flag::HTTP10 != 0 {
            facts & !flag::EXPECT_CONTINUE
        } else {
            facts
        };
        *self = ExchangeState {
            progress: Progress::NotStarted,
            flags: facts,
            error: None,
            slot: self.slot,
            gen: self.gen.wrapping_add(1),
            left: 0,
            body_limit: u64::MAX,
            start: 0,
        };
    }

    /// Starts an answer the engine writes itself (an error status): nothing pending,
    /// `Connection: close`, and its body sent unless it answers a `HEAD` (`head_only`).
    pub(crate) fn begin_closing(&mut self, head_only: bool) {
        self.begin(if head_only { flag::HEAD_ONLY } else { 0 } | flag::CLOSE);
    }

    /// Whether every one of the [`flag`]s `f` is set.
    #[inline(always)]
    pub(crate) fn is(&self, f: u16) -> bool {
        self.flags & f == f
    }

    #[inline(always)]
    pub(crate) fn set(&mut self, f: u16) {
        self.flags |= f;
    }

    /// The request is a `HEAD`.
    #[inline(always)]
    pub(crate) fn head_only(&self) -> bool {
        self.is(flag::HEAD_ONLY)
    }

    /// The request has a body.
    #[inline(always)]
    pub(crate) fn has_body(&self) -> bool {
        self.is(flag::HAS_BODY)
    }

    /// The exchange is complete, without a body, and the connection goes on to the next
    /// request: the common case, in one compare of the flags.
    #[inline(always)]
    pub(crate) fn done_and_kept(&self) -> bool {
        self.progress == Progress::Done
            && self.error.is_none()
            && self.flags & (flag::KEEP_ALIVE | flag::CLOSE | flag::HAS_BODY | flag::UPGRADED)
                == flag::KEEP_ALIVE
    }

    /// The token naming this exchange (an upgraded connection's, for its wake-ups).
    pub(crate) fn token(&self) -> Deferred {
        Deferred {
            slot: self.slot,
            gen: self.gen,
        }
    }

    /// The token of this exchange while it is deferred.
    pub(crate) fn deferred_token(&self) -> Option<Deferred> {
        (self.progress == Progress::Deferred).then_some(Deferred {
            slot: self.slot,
            gen: self.gen,
        })
    }

    /// The service answered for now: the response is complete, deferred, or its body is
    /// pulled from the service as the output drains.
    pub(crate) fn is_answered(&self) -> bool {
        matches!(self.progress, Progress::Done | Progress::Deferred) || self.pulls()
    }

    /// The body is being pulled from the service ([`Exchange::pull`]) and is not complete.
    pub(crate) fn pulls(&self) -> bool {
        self.is(flag::PULLING)
            && matches!(
                self.progress,
                Progress::Length | Progress::Chunked | Progress::UntilClose
            )
    }

    /// Nothing of the current exchange is pending: the connection may go on to the next.
    #[inline]
    pub(crate) fn is_settled(&self) -> bool {
        self.progress as u8 <= Progress::Done as u8
    }

    /// Whether the connection serves another request after this one. A client that waits for
    /// `100 Continue` and did not get it may never send its body, so the connection cannot be
    /// reused then.
    #[inline]
    pub(crate) fn keep(&self) -> bool {
        let waits = flag::HAS_BODY | flag::EXPECT_CONTINUE;
        self.flags & (flag::KEEP_ALIVE | flag::CLOSE) == flag::KEEP_ALIVE
            && self.flags & (waits | flag::CONTINUE_SENT) != waits
    }

    /// Whether a response may start now: nothing written yet, or the exchange deferred in the
    /// call that is still running (answering at once voids its token).
    #[inline(always)]
    pub(crate) fn may_start(&mut self) -> bool {
        self.progress == Progress::NotStarted || self.undefer()
    }

    /// A response started after a deferral in the same call: the deferral is void.
    #[cold]
    #[inline(never)]
    pub(crate) fn undefer(&mut self) -> bool {
        let deferred = self.progress == Progress::Deferred;
        if deferred {
            self.progress = Progress::NotStarted;
        }
        deferred
    }

    /// The refusal of a whole body over its limit, out of line: inlined, it cost `body_with`
    /// the inlining of the service's writer.
    #[cold]
    #[inline(never)]
    pub(crate) fn too_large(&mut self, len: usize, limit: usize) -> ResponseError {
        self.fail(ResponseError::TooLarge { len, limit })
    }

    pub(crate) fn fail(&mut self, e: ResponseError) -> ResponseError {
        self.error.get_or_insert(e);
        e
    }
}
