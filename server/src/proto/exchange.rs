//! The response side of one request: what a [`Service`](crate::Service) writes through, and the
//! rules of the protocol the engine keeps for it.
//!
//! Everything is encoded straight into the connection's pooled output blocks; nothing is
//! allocated. The engine, not the service, writes what frames the exchange, so a service cannot
//! send a response that a client or proxy would read differently from the engine:
//!
//! * `Content-Length` or `Transfer-Encoding: chunked`, from the terminal the service picks
//!   ([`Response::body`], [`Response::stream`], [`Response::chunked`]); none for 1xx, 204 and
//!   304, whose content is always empty (RFC 9110 §8.6, RFC 9112 §6.3);
//! * no body for a `HEAD` request, though its headers are a GET's (RFC 9110 §9.3.2);
//! * `Connection: close` when the connection ends after the response, `Connection: keep-alive`
//!   for an HTTP/1.0 client that asked for it (RFC 9112 §9.3), and for HTTP/1.0 a chunked
//!   stream becomes a body delimited by the close (it cannot read chunked, §6.1);
//! * `Date` (RFC 9110 §6.6.1) from the worker's once-a-second cache, and `Server` when
//!   [`Config::server_name`](crate::Config::server_name) is set;
//! * `100 Continue` when the client waits for it and the service reads the body
//!   ([`Exchange::read_body`]), never to an HTTP/1.0 client.
//!
//! A misuse (a framing header set by hand, a second response, a body on a 204, more bytes than
//! the announced length) is refused with a [`ResponseError`]; the engine then answers `500` in
//! the response's place while none of it has gone out, or closes the connection after.

use std::fmt;

use bufslab::PoolBuf;
use bufslab_http::{
    status_allows_content, status_line, write_chunk, BodyFraming, DateCache, KnownHeader,
    ResponseHead,
};
use bytes::BufMut;

use crate::body_writer::BodyWriter;
use crate::deferred::Deferred;
pub(crate) use crate::exchange_state::{flag, ExchangeState, Progress};
use crate::out_queue::{BlockSource, OutQueue};
use crate::owned_body::OwnedBody;
pub use crate::response_error::ResponseError;
use crate::shared::Shared;
pub(crate) use crate::static_response::header_methods;
pub use crate::static_response::{StaticHead, StaticResponse};
use crate::stats::ServerStats;
use crate::tls_info::TlsInfo;

/// Bytes of output room the engine makes sure of before it calls a service for a head, so
/// that a typical response (a head of a few headers and a small body) never waits for the
/// pool. More is taken from the pool as it is written.
pub(crate) const RESPONSE_ROOM: usize = 512;

/// Chunk framing around a piece of data: the hex size line and two CRLFs.
pub(crate) const CHUNK_FRAMING: usize = 20;

/// The response side of one request, handed to each [`Service`](crate::Service) call.
///
/// Start the response with [`respond`](Self::respond) (or
/// [`send_static`](Self::send_static)); for a streamed body, go on with
/// [`write`](Self::write) and [`finish`](Self::finish) in the same or later calls.
pub struct Exchange<'a> {
    /// Room behind the request head in its own read block, written before anything goes to
    /// `out` (see [`Exchange::behind_head`]); empty when the response goes to `out` alone.
    first: &'a mut [u8],
    /// `first`'s length when lent: what was written into it is the difference.
    first_len: usize,
    out: &'a mut OutQueue,
    pub(crate) ctx: &'a Ctx<'a>,
    pub(crate) st: &'a mut ExchangeState,
}

/// What every exchange of a worker shares.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The worker's local cache of the pool.
    pub(crate) blocks: &'a dyn BlockSource,
    pub(crate) date: &'a DateCache,
    /// The `Server` header of the responses the engine frames.
    pub(crate) server_name: Option<&'static [u8]>,
    /// The most bytes a whole body may hold (`Config::whole_body_limit`).
    pub(crate) whole_body: usize,
    /// The most [`Response::body_with`] may write: the whole-body limit, or less where one
    /// block of the pool's largest class cannot hold it with the head's end.
    pub(crate) body_with_max: usize,
    pub(crate) shared: &'a Shared,
    /// The pool's large class: the largest block an upgraded connection's write takes.
    pub(crate) large_block: usize,
    /// `Config::upgrade_h2c`.
    pub(crate) upgrade_h2c: bool,
    /// The connection's TLS session, on an HTTPS listener.
    pub(crate) tls: Option<TlsInfo<'a>>,
}

impl fmt::Debug for Exchange<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exchange").field("state", &self.st).finish()
    }
}

impl<'a> Exchange<'a> {
    #[inline]
    pub(crate) fn new(out: &'a mut OutQueue, ctx: &'a Ctx<'a>, st: &'a mut ExchangeState) -> Self {
        Exchange {
            first: &mut [],
            first_len: 0,
            out,
            ctx,
            st,
        }
    }

    /// Asks for the request body: [`Service::data`](crate::Service::data) gets its pieces and
    /// [`Service::end`](crate::Service::end) its end (at once when there is none). Sends
    /// `100 Continue` first when the client waits for it; call this before responding, or the
    /// client may never send the body (the connection then closes after the response).
    pub fn read_body(&mut self) {
        if self.st.is(flag::READS_BODY) {
            return;
        }
        self.st.set(flag::READS_BODY);
        let waits = self.st.is(flag::HAS_BODY | flag::EXPECT_CONTINUE);
        if waits
            && self.st.progress == Progress::NotStarted
            && self.put(bufslab_http::CONTINUE_100).is_ok()
        {
            self.st.set(flag::CONTINUE_SENT);
            self.st.start += bufslab_http::CONTINUE_100.len();
        }
    }

    /// [`read_body`](Self::read_body), taking at most `max` bytes of body (within
    /// [`Config::max_body`](crate::Config::max_body)): a body announced larger is answered
    /// `413` before any of it is read, one that turns out larger (chunked) with `413` while
    /// the response can still be taken back, else the connection closes.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_server::Exchange;
    ///
    /// fn upload_avatar(ex: &mut Exchange<'_>) {
    ///     ex.read_body_limited(64 * 1024); // this route takes 64 KiB at most
    /// }
    /// ```
    pub fn read_body_limited(&mut self, max: u64) {
        self.st.body_limit = self.st.body_limit.min(max);
        self.read_body();
    }

    /// Writes the response into `room`, the spare room behind the request head in its read
    /// block, before anything goes to the output queue (which is empty). Once the service is
    /// done the head is consumed and that block becomes the response's: one block per
    /// exchange instead of two, and a connection holding a block can always answer, even with
    /// the pool exhausted.
    #[inline]
    pub(crate) fn behind_head(&mut self, room: &'a mut [u8]) {
        self.first_len = room.len();
        self.first = room;
    }

    /// Bytes written into the room [`behind_head`](Self::behind_head) lent.
    #[inline]
    pub(crate) fn behind_head_written(&self) -> usize {
        self.first_len - self.first.len()
    }

    /// The service asked for the body of a request that has none: its `end` is due at once.
    #[inline]
    pub(crate) fn reads_body_now(&self) -> bool {
        self.st.flags & (flag::READS_BODY | flag::HAS_BODY) == flag::READS_BODY
    }

    /// Defers the response: the service answers later, from any thread, by sending this
    /// exchange's [`State`](crate::Service::State) to the worker's
    /// [`Mailbox`](crate::Mailbox) with the token returned here; the worker then calls
    /// [`Service::resume`](crate::Service::resume) to write the response. Meanwhile the
    /// connection reads and answers nothing more, so pipelined responses stay in order; an
    /// answer that comes after the connection closed (its idle timeout runs meanwhile) is
    /// dropped.
    ///
    /// Until the call that deferred returns, the exchange can still be answered at once: when
    /// handing the work over fails (a full queue, say), respond as usual (`503`, say) and the
    /// token is void; an answer sent with it anyway is dropped.
    ///
    /// # Errors
    /// [`ResponseError::AlreadyStarted`] once a response was started.
    pub fn defer(&mut self) -> Result<Deferred, ResponseError> {
        if self.st.progress != Progress::NotStarted {
            return Err(self.st.fail(ResponseError::AlreadyStarted));
        }
        self.st.progress = Progress::Deferred;
        Ok(Deferred {
            slot: self.st.slot,
            gen: self.st.gen,
        })
    }

    /// Pulls the rest of a streamed body ([`Response::stream`] or [`Response::chunked`]) from
    /// the service: the engine calls [`Service::fill`](crate::Service::fill) each time the
    /// connection's output has drained to the socket, until the body is complete (its last
    /// byte, or [`finish`](Self::finish)). A body of any size goes out in constant memory, at
    /// the pace the client reads it. The connection answers nothing else meanwhile.
    ///
    /// With the response already complete (its last byte written, a `HEAD` response, a body
    /// of length 0) there is nothing to pull, and this does nothing.
    ///
    /// # Errors
    /// [`ResponseError::NotStreaming`] with no response started.
    pub fn pull(&mut self) -> Result<(), ResponseError> {
        match self.st.progress {
            Progress::Length | Progress::Chunked | Progress::UntilClose => {
                self.st.set(flag::PULLING);
                Ok(())
            }
            Progress::Done => Ok(()),
            _ => Err(self.st.fail(ResponseError::NotStreaming)),
        }
    }

    /// Body bytes still to be written of a response of announced length
    /// ([`Response::stream`]): `Some(0)` once the response is complete, `None` while no body
    /// of known length is in progress (none started, or a chunked one).
    #[must_use]
    pub fn body_left(&self) -> Option<u64> {
        match self.st.progress {
            Progress::Length => Some(self.st.left),
            Progress::Done => Some(0),
            _ => None,
        }
    }

    /// A block of at least `len` bytes from the engine's pool, the one its connections read
    /// and write with: what a service keeps in it counts against
    /// [`PoolConfig::max_bytes`](crate::PoolConfig::max_bytes) and shows in
    /// [`Exchange::stats`]. Hand it back as a response body with [`Response::body_owned`], or
    /// drop it to return it. `None` when the pool has no block of that size to give (it is
    /// dry, or `len` is over its largest class).
    #[must_use]
    pub fn rent(&self, len: usize) -> Option<PoolBuf> {
        self.ctx.blocks.block(len)
    }

    /// The request is a `HEAD`: whatever body is written is dropped, the headers are a GET's.
    #[must_use]
    pub fn is_head(&self) -> bool {
        self.st.head_only()
    }

    /// Closes the connection after this response: nothing the client pipelined behind this
    /// request is answered. Called before the response head is written, the head says
    /// `Connection: close`; called later (in [`Service::data`](crate::Service::data),
    /// [`end`](crate::Service::end), [`resume`](crate::Service::resume) or
    /// [`fill`](crate::Service::fill), after the head went out), the connection closes all
    /// the same once the response is complete. A request body not read by then is not read
    /// further: the service's `data` is not called again.
    pub fn close(&mut self) {
        self.st.set(flag::CLOSE);
    }

    /// Starts the response with `status` (200..=999).
    ///
    /// Errors (a second response, an interim status) are reported by the terminal call,
    /// [`Response::body`], [`stream`](Response::stream) or [`chunked`](Response::chunked).
    #[inline]
    pub fn respond(&mut self, status: u16) -> Response<'_, 'a> {
        self.begin(status, None)
    }

    /// Starts the response with a precomputed status line and headers, copied at once.
    ///
    /// Errors (a second response) are reported by the terminal call, as for
    /// [`respond`](Self::respond).
    #[inline]
    pub fn respond_with(&mut self, head: &StaticHead) -> Response<'_, 'a> {
        self.begin(head.status, Some(&head.head))
    }

    #[inline(always)]
    fn begin(&mut self, status: u16, prefix: Option<&[u8]>) -> Response<'_, 'a> {
        let mut r = Response {
            ex: self,
            status,
            error: None,
        };
        if !r.ex.st.may_start() {
            r.error = Some(ResponseError::AlreadyStarted);
        } else if !(200..=999).contains(&status) {
            r.error = Some(ResponseError::InterimStatus(status));
        } else if let Some(prefix) = prefix {
            r.ex.st.progress = Progress::Head;
            r.error = r.ex.put(prefix).err();
        } else {
            r.ex.st.progress = Progress::Head;
            let res = match status_line(status) {
                Some(line) => r.ex.put(line),
                None => {
                    // `HTTP/1.1 NNN ` with no reason phrase, as the codec's encoder writes it
                    // for a code it has none for: exactly 13 bytes.
                    let mut line = [0u8; 13];
                    let _ = ResponseHead::new(&mut &mut line[..], status);
                    r.ex.put(&line)
                }
            };
            r.error = res.err();
        }
        r
    }

    /// Sends a precomputed response whole: its status line, headers and body, plus the
    /// per-response `Date` and `Connection` (Kestrel's precomputed header bytes).
    ///
    /// # Errors
    /// As [`Response::body`].
    #[inline]
    pub fn send_static(&mut self, r: &StaticResponse) -> Result<(), ResponseError> {
        if !self.st.may_start() {
            return Err(self.st.fail(ResponseError::AlreadyStarted));
        }
        let body = if self.st.head_only() {
            &[][..]
        } else {
            &r.body
        };
        let keep = self.st.keep();
        let need = r.head.len() + DATE_AND_CONNECTION + body.len();
        let (date, http10) = (self.ctx.date, self.st.is(flag::HTTP10));
        if need <= INLINE_BODY + HEAD_END {
            // The common case: the whole response into room looked up once.
            self.write_in(need, |out| {
                out.put(&r.head);
                finish_head(out, date, keep, http10);
                out.put(body);
            })?;
        } else {
            // Larger than a piece that may go into one block: across blocks.
            self.check_whole(r.body.len(), self.ctx.whole_body)?;
            self.put(&r.head)?;
            self.write_in(DATE_AND_CONNECTION, |out| {
                finish_head(out, date, keep, http10);
            })?;
            self.put(body)?;
        }
        self.st.progress = Progress::Done;
        Ok(())
    }

    /// Writes body bytes of a response started with [`Response::stream`] or
    /// [`Response::chunked`] (one chunk per call). Dropped for a `HEAD` request.
    ///
    /// # Errors
    /// [`ResponseError::NotStreaming`] with no body in progress,
    /// [`ResponseError::LengthExceeded`] past the announced length, [`ResponseError::NoRoom`]
    /// when the output cannot take it (write at most [`write_room`](Self::write_room) bytes
    /// per call to be sure it can).
    pub fn write(&mut self, data: &[u8]) -> Result<(), ResponseError> {
        match self.st.progress {
            Progress::Length => {
                let n = data.len() as u64;
                if n > self.st.left {
                    return Err(self.st.fail(ResponseError::LengthExceeded));
                }
                self.put(data)?;
                self.st.left -= n;
                if self.st.left == 0 {
                    self.st.progress = Progress::Done;
                }
                Ok(())
            }
            Progress::Chunked => self.put_chunk(data),
            Progress::UntilClose => self.put(data),
            // Nothing to write is no misuse, even once the body is complete (a loop that
            // writes what fits may end on an empty piece).
            Progress::Done if self.st.head_only() || data.is_empty() => Ok(()),
            _ => Err(self.st.fail(ResponseError::NotStreaming)),
        }
    }

    /// Ends a streamed body: the last chunk of a chunked one. A body of announced length ends
    /// by itself with its last byte.
    ///
    /// # Errors
    /// [`ResponseError::NotStreaming`] with no body in progress or one of announced length not
    /// all written; [`ResponseError::NoRoom`].
    pub fn finish(&mut self) -> Result<(), ResponseError> {
        match self.st.progress {
            Progress::Chunked => {
                self.put(b"0\r\n\r\n")?;
                self.st.progress = Progress::Done;
                Ok(())
            }
            Progress::UntilClose => {
                self.st.progress = Progress::Done;
                Ok(())
            }
            Progress::Done => Ok(()),
            _ => Err(self.st.fail(ResponseError::NotStreaming)),
        }
    }

    /// Body bytes one [`write`](Self::write) can take now without waiting for the pool: the
    /// room left in the output's last block, less the chunk framing. (A larger write may still
    /// succeed, taking blocks from the pool.)
    #[must_use]
    pub fn write_room(&self) -> usize {
        let spare = if self.out.is_empty() {
            self.first.len()
        } else {
            self.out.tail_spare()
        };
        spare.saturating_sub(CHUNK_FRAMING)
    }

    /// The connection's TLS session (its ALPN protocol, SNI name, version and suite), or
    /// `None` for plain HTTP.
    #[must_use]
    pub fn tls(&self) -> Option<TlsInfo<'_>> {
        self.ctx.tls
    }

    /// A snapshot of the server's counters and pool. Allocates nothing.
    #[must_use]
    pub fn stats(&self) -> ServerStats {
        self.ctx.shared.snapshot()
    }

    /// Output room of `n` bytes: behind the head while that has it, else the last queued
    /// block, or a new one behind it.
    #[inline(always)]
    fn room(&mut self, n: usize) -> Result<Room<'_, 'a>, ResponseError> {
        if self.out.is_empty() && self.first.len() >= n {
            return Ok(Room::First(&mut self.first));
        }
        // Once the output goes to the queue it stays there, so the bytes stay in order.
        self.first_len -= self.first.len();
        self.first = &mut [];
        match self.out.reserve(self.ctx.blocks, n) {
            Ok(b) => Ok(Room::Block(b)),
            Err(_) => Err(self.st.fail(ResponseError::NoRoom)),
        }
    }

    /// Refuses a whole body of `len` bytes over `limit`.
    #[inline(always)]
    fn check_whole(&mut self, len: usize, limit: usize) -> Result<(), ResponseError> {
        if len > limit {
            return Err(self.st.too_large(len, limit));
        }
        Ok(())
    }

    /// Queues a body the service handed over, behind everything written so far.
    fn push_owned(&mut self, body: OwnedBody) -> Result<(), ResponseError> {
        // Once the output goes to the queue it stays there, so the bytes stay in order.
        self.first_len -= self.first.len();
        self.first = &mut [];
        match self.out.push_owned(body.0) {
            Ok(()) => Ok(()),
            Err(_) => Err(self.st.fail(ResponseError::NoRoom)),
        }
    }

    /// Appends `bytes` to the output, across blocks when the last one is full. The common
    /// case, a few bytes into a block with room, is one check and one copy.
    #[inline(always)]
    fn put(&mut self, mut bytes: &[u8]) -> Result<(), ResponseError> {
        loop {
            let mut out = self.room(bytes.len().min(MIN_PIECE))?;
            let n = bytes.len().min(out.spare());
            let (now, rest) = bytes.split_at(n);
            out.put(now);
            if rest.is_empty() {
                return Ok(());
            }
            bytes = rest;
        }
    }

    /// Appends `pieces` in order: into room looked up once when they are small together, else
    /// piece by piece across blocks.
    #[inline(always)]
    pub(crate) fn put_all(&mut self, pieces: &[&[u8]]) -> Result<(), ResponseError> {
        let need: usize = pieces.iter().map(|p| p.len()).sum();
        if need > INLINE_BODY {
            return pieces.iter().try_for_each(|p| self.put(p));
        }
        self.write_in(need, |out| {
            for p in pieces {
                out.put(p);
            }
        })
    }

    /// Has `write` fill room of `n` bytes looked up once (`n` is the most it writes; a piece
    /// beyond would be dropped), with no look at the block per piece.
    #[inline(always)]
    fn write_in(
        &mut self,
        n: usize,
        write: impl FnOnce(&mut BodyWriter<'_>),
    ) -> Result<(), ResponseError> {
        let mut room = self.room(n)?;
        let mut out = BodyWriter::new(room.spare_mut());
        write(&mut out);
        let at = out.len();
        room.commit(at);
        Ok(())
    }

    /// Appends `data` as one chunk or more (one per block it spans).
    fn put_chunk(&mut self, mut data: &[u8]) -> Result<(), ResponseError> {
        while !data.is_empty() {
            let out = self.room(data.len().min(MIN_PIECE) + CHUNK_FRAMING)?;
            let n = data.len().min(out.spare() - CHUNK_FRAMING);
            let (now, rest) = data.split_at(n);
            match out {
                Room::First(f) => write_chunk(f, now),
                Room::Block(b) => write_chunk(b, now),
            }
            data = rest;
        }
        Ok(())
    }
}

/// Where [`Exchange::room`] found room: behind the request head, or in a queued block.
enum Room<'r, 'a> {
    First(&'r mut &'a mut [u8]),
    Block(&'r mut PoolBuf),
}

impl Room<'_, '_> {
    #[inline(always)]
    fn spare_mut(&mut self) -> &mut [u8] {
        match self {
            Room::First(f) => f,
            Room::Block(b) => b.spare_mut(),
        }
    }

    /// The first `n` bytes of [`spare_mut`](Self::spare_mut) were written.
    #[inline(always)]
    fn commit(&mut self, n: usize) {
        match self {
            Room::First(f) => {
                let rest = std::mem::take(*f);
                **f = rest.get_mut(n..).unwrap_or_default();
            }
            Room::Block(b) => b.commit(n.min(b.spare_capacity())),
        }
    }

    #[inline(always)]
    fn spare(&self) -> usize {
        match self {
            Room::First(f) => f.len(),
            Room::Block(b) => b.spare_capacity(),
        }
    }

    /// Copies `bytes` in; the caller made sure of the room.
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        match self {
            Room::First(f) => f.put_slice(bytes),
            Room::Block(b) => b.put_slice(bytes),
        }
    }
}

/// The smallest piece a write splits off into a block of its own: below it, a fresh block is
/// taken rather than splitting bytes across the end of one.
const MIN_PIECE: usize = 64;

/// The largest header line or body that goes into room looked up once; a larger one is put
/// piece by piece, across blocks.
const INLINE_BODY: usize = 1024;

/// Upper bound of what [`finish_head`] writes: `Date` (37), `Connection: keep-alive` (24) and
/// the head's end (4).
const DATE_AND_CONNECTION: usize = 72;

/// The most [`Response`]'s end of head writes: `Content-Length` with 20 digits (38) or
/// `Transfer-Encoding: chunked` (28), `Server` of 40 bytes (50), `Date` (37),
/// `Connection: keep-alive` (24) and the empty line (4).
pub(crate) const HEAD_END: usize = 160;

/// The most [`Response::body_with`] may write under `cfg`: the whole-body limit, or less where
/// one block of the large class cannot hold that with the head's end.
pub(crate) fn body_with_max(cfg: &crate::Config) -> usize {
    cfg.whole_body_limit()
        .min(cfg.large_block().saturating_sub(HEAD_END))
}

/// The end of a [`Response`]'s head, checked ([`Response::head_end`]) and ready to write: the
/// framing header, `Server`, then [`finish_head`]'s lines; at most [`HEAD_END`] bytes.
#[derive(Clone, Copy)]
struct HeadEnd<'c> {
    /// `None`: no content allowed, or the close ends the body.
    framing: BodyFraming,
    keep: bool,
    http10: bool,
    /// `Connection` carries the `upgrade` option (`Response::offer_upgrade`, in `upgrade.rs`).
    upgrade: bool,
    server: Option<&'static [u8]>,
    date: &'c DateCache,
}

impl HeadEnd<'_> {
    /// The same end for a body of `len` bytes, once it is known (see [`Response::body_with`]).
    fn with_length(mut self, len: u64) -> Self {
        if let BodyFraming::Length(n) = &mut self.framing {
            *n = len;
        }
        self
    }

    #[inline(always)]
    fn put(&self, out: &mut BodyWriter<'_>) {
        match self.framing {
            BodyFraming::Length(n) => {
                out.put(b"\r\nContent-Length: ");
                out.put(itoa::Buffer::new().format(n).as_bytes());
            }
            BodyFraming::Chunked => {
                out.put(b"\r\nTransfer-Encoding: chunked");
            }
            BodyFraming::None => {}
        }
        if let Some(name) = self.server.filter(|n| n.len() <= 40) {
            out.put(b"\r\nServer: ");
            out.put(name);
        }
        if self.upgrade {
            finish_upgrade_head(out, self.date, self.keep);
        } else {
            finish_head(out, self.date, self.keep, self.http10);
        }
    }
}

/// [`finish_head`] for a response that offers an upgrade (never to HTTP/1.0): RFC 9110 §7.8
/// has the sender of `Upgrade` list `upgrade` in `Connection`, so that a proxy drops it.
/// At most [`DATE_AND_CONNECTION`] bytes.
#[cold]
#[inline(never)]
fn finish_upgrade_head(out: &mut BodyWriter<'_>, date: &DateCache, keep: bool) {
    out.put(date.line());
    out.put(if keep {
        b"\r\nConnection: upgrade"
    } else {
        b"\r\nConnection: close, upgrade"
    });
    out.put(b"\r\n\r\n");
}

/// Ends a head with the engine's per-response lines: `Date`, the `Connection` header the
/// exchange needs, and the empty line. `out` has [`DATE_AND_CONNECTION`] spare bytes.
#[inline(always)]
fn finish_head(out: &mut BodyWriter<'_>, date: &DateCache, keep: bool, http10: bool) {
    out.put(date.line());
    match (keep, http10) {
        (true, false) => true,
        (true, true) => out.put(b"\r\nConnection: keep-alive"),
        (false, _) => out.put(b"\r\nConnection: close"),
    };
    out.put(b"\r\n\r\n");
}

/// A response head being written: add headers, then end it with one of [`body`](Self::body),
/// [`stream`](Self::stream) or [`chunked`](Self::chunked). Dropped unfinished, the response is
/// a misuse and a 500 is sent in its place.
#[must_use = "end the response with body, stream or chunked"]
#[derive(Debug)]
pub struct Response<'e, 'a> {
    pub(crate) ex: &'e mut Exchange<'a>,
    status: u16,
    pub(crate) error: Option<ResponseError>,
}

impl<'a> Response<'_, 'a> {
    header_methods!(put_all);

    /// Checks that a body of `len` bytes (`None`: chunked) may end this head, and notes the
    /// framing it takes: for HTTP/1.0, a body of unknown length is delimited by the close.
    #[inline(always)]
    fn head_end(&mut self, len: Option<u64>) -> Result<HeadEnd<'a>, ResponseError> {
        if let Some(e) = self.error {
            return Err(self.ex.st.fail(e));
        }
        let allows = status_allows_content(self.status);
        if !allows && len != Some(0) {
            return Err(self
                .ex
                .st
                .fail(ResponseError::NoContentAllowed(self.status)));
        }
        let until_close = len.is_none() && self.ex.st.is(flag::HTTP10);
        if until_close {
            // An HTTP/1.0 client cannot read chunked (RFC 9112 §6.1): the close ends the body.
            self.ex.st.progress = Progress::UntilClose;
            self.ex.st.set(flag::CLOSE);
        }
        Ok(HeadEnd {
            framing: match len {
                Some(n) if allows => BodyFraming::Length(n),
                Some(_) => BodyFraming::None,
                None if until_close => BodyFraming::None,
                None => BodyFraming::Chunked,
            },
            keep: self.ex.st.keep(),
            http10: self.ex.st.is(flag::HTTP10),
            upgrade: self.ex.st.is(flag::OFFERS_UPGRADE),
            server: self.ex.ctx.server_name,
            date: self.ex.ctx.date,
        })
    }

    /// Ends the head with what frames the body (`Content-Length: len`, or chunked when `len`
    /// is `None`), and the engine's per-response lines.
    #[inline(always)]
    fn end_head(&mut self, len: Option<u64>) -> Result<(), ResponseError> {
        let end = self.head_end(len)?;
        self.ex.write_in(HEAD_END, |out| end.put(out))
    }

    /// Ends the response with a body given whole (`Content-Length` is its length).
    ///
    /// # Errors
    /// [`ResponseError`]: a misuse earlier in this response (a reserved or invalid header, a
    /// second response, a 1xx status), content for a status without it, or
    /// [`ResponseError::NoRoom`].
    #[inline]
    pub fn body(mut self, body: &[u8]) -> Result<(), ResponseError> {
        if body.len() > INLINE_BODY {
            self.ex.check_whole(body.len(), self.ex.ctx.whole_body)?;
            self.end_head(Some(body.len() as u64))?;
            if !self.ex.st.head_only() {
                self.ex.put(body)?;
            }
        } else {
            // A small body goes with the head's end, in room looked up once.
            let end = self.head_end(Some(body.len() as u64))?;
            let body = if self.ex.st.head_only() {
                &[][..]
            } else {
                body
            };
            self.ex.write_in(HEAD_END + body.len(), |out| {
                end.put(out);
                out.put(body);
            })?;
        }
        self.ex.st.progress = Progress::Done;
        Ok(())
    }

    /// Ends the response with a body handed over whole: queued by reference and sent with the
    /// head in one vectored write, with no copy in user space, and dropped (a pooled block
    /// goes home) once the kernel has taken it. Any length; `Content-Length` is its length.
    /// For a `HEAD` request it is dropped at once.
    ///
    /// # Errors
    /// As [`body`](Self::body) (but never [`ResponseError::TooLarge`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab::PoolBytes;
    /// use bufslab_server::{Exchange, ResponseError};
    ///
    /// // A store that keeps its values frozen in pooled blocks answers a GET without a copy.
    /// fn get(ex: &mut Exchange<'_>, value: &PoolBytes) -> Result<(), ResponseError> {
    ///     ex.respond(200).body_owned(value.clone())
    /// }
    /// ```
    pub fn body_owned(mut self, body: impl Into<OwnedBody>) -> Result<(), ResponseError> {
        let body = body.into();
        self.end_head(Some(body.len() as u64))?;
        if !self.ex.st.head_only() {
            self.ex.push_owned(body)?;
        }
        self.ex.st.progress = Progress::Done;
        Ok(())
    }

    /// Ends the response with a body of at most `max` bytes that `write` puts in place, into
    /// the output block itself, through a [`BodyWriter`] (an [`io::Write`](std::io::Write)):
    /// a serializer writes straight into the output, with no buffer of its own and no copy to
    /// the output. The head's end is written once the length is known, and the body moved up
    /// behind it. `max` is bounded by the pool's largest block, less 160 bytes for the head's
    /// end.
    ///
    /// For a `HEAD` request `write` still runs (the length goes in `Content-Length`), and its
    /// bytes are dropped.
    ///
    /// # Errors
    /// As [`body`](Self::body), and [`ResponseError::BodyNotWritten`] when `write` fails (the
    /// body did not fit in `max` bytes, say): the engine then answers `500` in the response's
    /// place, as for any misuse.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_server::{Exchange, ResponseError};
    ///
    /// fn hello(ex: &mut Exchange<'_>) -> Result<(), ResponseError> {
    ///     let value = serde_json::json!({"message": "Hello"});
    ///     ex.respond(200).body_with(64, |w| serde_json::to_writer(w, &value))
    /// }
    /// ```
    pub fn body_with<W, E>(mut self, max: usize, write: W) -> Result<(), ResponseError>
    where
        W: FnOnce(&mut BodyWriter<'_>) -> Result<(), E>,
    {
        // Checked as a body of `max` bytes would be: a status without content fails here,
        // before `write` runs.
        self.ex.check_whole(max, self.ex.ctx.body_with_max)?;
        let end = self.head_end(Some(max as u64))?;
        let Some(need) = max.checked_add(HEAD_END) else {
            return Err(self.ex.st.fail(ResponseError::NoRoom));
        };
        let head_only = self.ex.st.head_only();
        let mut room = self.ex.room(need)?;
        let spare = room.spare_mut();
        let Some(area) = spare.get_mut(HEAD_END..HEAD_END + max) else {
            return Err(self.ex.st.fail(ResponseError::NoRoom));
        };
        let mut w = BodyWriter::new(area);
        if write(&mut w).is_err() {
            return Err(self.ex.st.fail(ResponseError::BodyNotWritten));
        }
        let len = w.len();
        let end = end.with_length(len as u64);
        let mut out = BodyWriter::new(&mut *spare);
        end.put(&mut out);
        let at = out.len();
        let sent = if head_only { 0 } else { len };
        spare.copy_within(HEAD_END..HEAD_END + sent, at);
        room.commit(at + sent);
        self.ex.st.progress = Progress::Done;
        Ok(())
    }

    /// Ends the head of a response whose body of `len` bytes follows through
    /// [`Exchange::write`]; the response is complete with its last byte.
    ///
    /// # Errors
    /// As [`body`](Self::body).
    pub fn stream(mut self, len: u64) -> Result<(), ResponseError> {
        self.end_head(Some(len))?;
        self.ex.st.left = len;
        self.ex.st.progress = if len == 0 || self.ex.st.head_only() {
            Progress::Done
        } else {
            Progress::Length
        };
        Ok(())
    }

    /// Ends the head of a response whose body of unknown length follows through
    /// [`Exchange::write`], ended by [`Exchange::finish`]: chunked, or for an HTTP/1.0 client
    /// delimited by closing the connection.
    ///
    /// # Errors
    /// As [`body`](Self::body).
    pub fn chunked(mut self) -> Result<(), ResponseError> {
        self.end_head(None)?;
        if self.ex.st.head_only() {
            self.ex.st.progress = Progress::Done;
        } else if self.ex.st.progress != Progress::UntilClose {
            self.ex.st.progress = Progress::Chunked;
        }
        Ok(())
    }
}
