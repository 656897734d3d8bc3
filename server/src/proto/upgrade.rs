//! Protocol upgrades (RFC 9110 §7.8): a service answers an `Upgrade` request with
//! `101 Switching Protocols` ([`Exchange::switch_protocols`](crate::Exchange::switch_protocols)),
//! and from then on the connection's bytes are the service's, through
//! [`Service::upgraded`](crate::Service::upgraded) and an [`Upgraded`] handle, on the same
//! machinery as HTTP: pooled receive blocks in, the connection's output queue out.
//!
//! In the manner of hyper's `hyper::upgrade::on` (the connection is handed over once the 101
//! is out) and h11's `SWITCHED_PROTOCOL` state (bytes after the head belong to the new
//! protocol), fitted to the engine's callbacks: no task, no future, no allocation. The
//! connection core stays I/O-free; the drivers only read, send and close as it says.

use std::fmt;

use bufslab::PoolBuf;
use bufslab_http::{is_field_name, is_field_value, KnownHeader, Request, Version};

use crate::deferred::Deferred;
use crate::exchange::{
    flag, header_methods, Ctx, Exchange, ExchangeState, Progress, Response, ResponseError,
};
use crate::out_queue::OutQueue;
use crate::owned_body::OwnedBody;
use crate::stats::ServerStats;
use crate::tls_info::TlsInfo;

/// Why [`Exchange::switch_protocols`](crate::Exchange::switch_protocols) will not switch this
/// request. Nothing was written: answer the request as an ordinary one (or refuse it: a
/// WebSocket endpoint answers `400` or `426`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpgradeError {
    /// The request has no `Connection: upgrade`, or its `Upgrade` field does not list the
    /// protocol.
    NotOffered,
    /// Not an HTTP/1.1 request (HTTP/1.0 has no `Upgrade`), or a `HEAD`.
    NotHttp11,
    /// The request has a body. The engine switches only requests without one: the body would
    /// have to be read whole before the switch (RFC 9110 §7.8), and a client sending one may
    /// already send the new protocol's bytes behind it. `GET` is what WebSocket uses.
    HasBody,
    /// The connection closes after this response: the client asked to close, the service
    /// called [`Exchange::close`](crate::Exchange::close), or the server is shutting down.
    Closing,
    /// `h2c` (RFC 7540 §3.2, removed by RFC 9113): never switched unless
    /// [`Config::upgrade_h2c`](crate::Config::upgrade_h2c) is set.
    H2cRefused,
    /// The protocol name is not a token (RFC 9110 §5.6.2).
    InvalidProtocol,
    /// A response was already started for this request, or this is not the call of its head.
    AlreadyStarted,
}

impl fmt::Display for UpgradeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UpgradeError::NotOffered => "the request does not offer this protocol",
            UpgradeError::NotHttp11 => "only an HTTP/1.1 request other than HEAD can switch",
            UpgradeError::HasBody => "a request with a body is not switched",
            UpgradeError::Closing => "the connection closes after this response",
            UpgradeError::H2cRefused => "h2c upgrades are refused (Config::upgrade_h2c)",
            UpgradeError::InvalidProtocol => "the protocol name is not a token",
            UpgradeError::AlreadyStarted => "a response was already started",
        })
    }
}

impl std::error::Error for UpgradeError {}

/// Why [`Upgraded::write`] did not take the bytes. Nothing of them was queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// [`Upgraded::close`] was called: nothing more goes out.
    Closed,
    /// The output queue cannot take this many bytes now (more than
    /// [`Upgraded::write_room`]), or the pool has no block.
    NoRoom,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WriteError::Closed => "the upgraded connection is closing",
            WriteError::NoRoom => "no output room (queue full, or pool empty)",
        })
    }
}

impl std::error::Error for WriteError {}

// `Upgrade` on an ordinary response: an upgrade offered, not made.
impl Response<'_, '_> {
    /// Adds `Upgrade: protocols`, the protocols the request could switch to (RFC 9110 §7.8):
    /// a comma-separated list of `name` or `name/version` tokens, most preferred first. A
    /// `426 Upgrade Required` must carry it (§15.5.22); any other response may, to advertise.
    /// The engine adds the `upgrade` option to its `Connection` header, as §7.8 asks of a
    /// sender of `Upgrade` (the field itself is reserved for [`header`](Self::header)).
    /// HTTP/1.0 has no upgrades: a response to an HTTP/1.0 request goes without the field.
    ///
    /// Switching protocols is [`Exchange::switch_protocols`]; this only offers.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_server::{Exchange, ResponseError};
    ///
    /// fn upgrade_required(ex: &mut Exchange<'_>) -> Result<(), ResponseError> {
    ///     ex.respond(426).offer_upgrade(b"websocket").body(b"")
    /// }
    /// ```
    pub fn offer_upgrade(mut self, protocols: &[u8]) -> Self {
        if self.error.is_some() {
            return self;
        }
        if !is_protocol_list(protocols) {
            self.error = Some(ResponseError::InvalidHeader);
        } else if !self.ex.st.is(flag::HTTP10) {
            self.error = self.ex.put_all(&[b"\r\nUpgrade: ", protocols]).err();
            self.ex.st.set(flag::OFFERS_UPGRADE);
        }
        self
    }
}

// The upgrade's part of the exchange, here rather than in `exchange.rs`, which knows nothing
// of upgrades but the `upgrade` option of its `Connection` header (the modules form no cycle).
impl<'a> Exchange<'a> {
    /// Answers an `Upgrade` request with `101 Switching Protocols` to `protocol` (`websocket`,
    /// or `name/version`): the engine writes the status line, `Connection: upgrade` and
    /// `Upgrade: protocol`; add the protocol's own headers to the [`Switch`] and end it with
    /// [`Switch::switch`]. Once this `head` call returns, the connection belongs to
    /// [`Service::upgraded`](crate::Service::upgraded): first
    /// [`UpgradeEvent::Start`](crate::UpgradeEvent::Start), then the bytes the client sent
    /// after the head, in pooled blocks.
    ///
    /// Only from [`Service::head`](crate::Service::head), with its `req`, for an HTTP/1.1
    /// request other than `HEAD`, with no body, that lists `protocol` in its `Upgrade` field
    /// and says `Connection: upgrade`, on a connection that is not closing. `h2c` is refused
    /// unless [`Config::upgrade_h2c`](crate::Config::upgrade_h2c) is set. A request that is
    /// not switched is answered as any other (the `Upgrade` field is only an offer).
    ///
    /// # Errors
    /// [`UpgradeError`] when the request cannot switch; nothing was written, so answer it
    /// as an ordinary request or refuse it.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::Request;
    /// use bufslab_server::Exchange;
    ///
    /// fn head(req: &Request<'_, '_>, ex: &mut Exchange<'_>) {
    ///     match ex.switch_protocols(req, b"echo") {
    ///         Ok(switch) => {
    ///             let _ = switch.header_raw(b"x-protocol-version", b"1").switch();
    ///         }
    ///         Err(_) => {
    ///             let _ = ex.respond(426).offer_upgrade(b"echo").body(b"");
    ///         }
    ///     }
    /// }
    /// ```
    pub fn switch_protocols(
        &mut self,
        req: &Request<'_, '_>,
        protocol: &[u8],
    ) -> Result<Switch<'_, 'a>, UpgradeError> {
        check(req, protocol, self.st, self.ctx.upgrade_h2c)?;
        self.st.progress = Progress::Head;
        let error = self
            .put_raw(&[
                b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: ",
                protocol,
            ])
            .err();
        Ok(Switch { ex: self, error })
    }

    /// Appends `pieces` to the output (a `101`'s lines).
    pub(crate) fn put_raw(&mut self, pieces: &[&[u8]]) -> Result<(), ResponseError> {
        self.put_all(pieces)
    }

    /// Records a misuse of this exchange.
    pub(crate) fn fail(&mut self, e: ResponseError) -> ResponseError {
        self.st.fail(e)
    }

    /// The `101` is complete: the connection switches once the service's call returns.
    pub(crate) fn switched(&mut self) {
        self.st.progress = Progress::Done;
        self.st.set(flag::UPGRADED);
    }
}

/// What happened on an upgraded connection: the argument of
/// [`Service::upgraded`](crate::Service::upgraded).
#[derive(Debug)]
#[non_exhaustive]
pub enum UpgradeEvent<'d> {
    /// The `101` is queued and the connection is the service's: once, before any `Data`,
    /// and before the `101` is sent. Bytes written now go out right behind the `101`.
    Start,
    /// Bytes received, in order, starting with those the client sent right behind the
    /// request head (pipelined in the same packet as the upgrade request). A slice of the
    /// pooled receive block, writable so a decoder can unmask or decode in place; every byte
    /// of it counts as consumed when the call returns (keep what a partial unit of the
    /// protocol needs, as `bufslab_ws::Decoder` does). Delivered only while the connection's
    /// output is all sent, one block at most, so [`Upgraded::write_room`] is at its largest.
    Data(&'d mut [u8]),
    /// The peer ended its stream (it closed, or shut down its writing side). The service may
    /// write last bytes; they are sent, then the connection closes. No more events come.
    PeerClosed,
    /// The server is shutting down gracefully. Say goodbye in the protocol (a WebSocket
    /// close `1001`) and call [`Upgraded::close`]; the connection is cut when the shutdown
    /// grace period ends. The default service method closes at once.
    Shutdown,
    /// Another connection or thread woke this one ([`Mailbox::wake`](crate::Mailbox::wake)
    /// with its [`Upgraded::token`]), and its output is all sent: write what it was woken
    /// for (a broadcast, a notification). Wake-ups that come before it is delivered make one.
    Wake,
}

/// What the core keeps of an upgraded connection.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UpState {
    pub(crate) started: bool,
    pub(crate) told_shutdown: bool,
    /// A wake-up came through the mailbox and was not yet delivered.
    pub(crate) woken: bool,
    pub(crate) close: bool,
    /// A read filled a small block: the peer sends more than one holds at a time, so reads go
    /// into large blocks from now on (a 4 KiB WebSocket message and its frame header in one
    /// read, not two).
    pub(crate) large_reads: bool,
}

/// An upgraded connection, as a [`Service::upgraded`](crate::Service::upgraded) call sees it:
/// write the new protocol's bytes, close. Writes go into the connection's output queue
/// (pooled blocks, [`Config::out_blocks`](crate::Config::out_blocks) entries), sent in order
/// as the peer reads them; while anything is queued no more input is delivered, so a peer
/// that does not read stops being read (backpressure), and the idle timeout runs.
pub struct Upgraded<'a> {
    pub(crate) out: &'a mut OutQueue,
    pub(crate) ctx: &'a Ctx<'a>,
    pub(crate) st: &'a mut UpState,
    pub(crate) shutting_down: bool,
    pub(crate) token: Deferred,
}

impl fmt::Debug for Upgraded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upgraded")
            .field("queued", &self.out.queued())
            .field("closing", &self.st.close)
            .finish()
    }
}

impl Upgraded<'_> {
    /// Queues `data` whole, or nothing of it ([`WriteError`]): it never leaves a partial unit
    /// of the protocol in the queue.
    ///
    /// # Errors
    /// [`WriteError::Closed`] after [`close`](Self::close); [`WriteError::NoRoom`] when more
    /// than [`write_room`](Self::write_room) bytes are asked and the queue or the pool cannot
    /// take them.
    pub fn write(&mut self, data: &[u8]) -> Result<(), WriteError> {
        self.write_vectored(&[data])
    }

    /// Queues `pieces` one after the other, all of them or nothing (a frame's header and its
    /// payload, say).
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub fn write_vectored(&mut self, pieces: &[&[u8]]) -> Result<(), WriteError> {
        if self.st.close {
            return Err(WriteError::Closed);
        }
        let before = self.out.queued();
        let mut left: usize = pieces.iter().map(|p| p.len()).sum();
        for piece in pieces {
            if self.put(piece, left).is_err() {
                self.out.truncate(before);
                return Err(WriteError::NoRoom);
            }
            left -= piece.len();
        }
        Ok(())
    }

    /// Queues `rest`, the first of the `left` bytes the write has still to queue.
    fn put(&mut self, mut rest: &[u8], mut left: usize) -> Result<(), ()> {
        while !rest.is_empty() {
            // The last block's room is used down to a small piece; below, a fresh block of
            // the size of what the whole write has left (up to the large class) is taken, so
            // that `write_room`'s count of free entries holds, and a write in pieces takes
            // the blocks the same write in one piece would: a frame header and a 4 KiB
            // payload go into one large block, not two small ones (which a pool with one
            // small block left refused, large blocks to spare).
            let small = rest.len().min(MIN_PIECE);
            let room = if self.out.tail_spare() >= small {
                small
            } else {
                left.min(self.ctx.large_block)
            };
            let b = self.out.reserve(self.ctx.blocks, room).map_err(drop)?;
            let n = rest.len().min(b.spare_capacity());
            let (now, later) = rest.split_at(n);
            b.spare_mut()
                .get_mut(..n)
                .unwrap_or_default()
                .copy_from_slice(now);
            b.commit(n);
            rest = later;
            left -= n;
        }
        Ok(())
    }

    /// Queues a block (or a `bytes::Bytes`, or a `PoolBytes` view) by reference, with no copy:
    /// sent behind what is queued, and dropped (a pooled block goes home) once sent.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub fn write_owned(&mut self, body: impl Into<OwnedBody>) -> Result<(), WriteError> {
        if self.st.close {
            return Err(WriteError::Closed);
        }
        self.out
            .push_owned(body.into().0)
            .map_err(|_| WriteError::NoRoom)
    }

    /// Bytes one [`write`](Self::write) is sure to take now, pool permitting: the room left
    /// in the last output block and in the queue's free entries (each a block of the pool's
    /// large class). With nothing queued (as in every `Data` event) this is the whole queue.
    #[must_use]
    pub fn write_room(&self) -> usize {
        if self.st.close {
            return 0;
        }
        self.out.tail_spare() + self.out.free_entries() * self.ctx.large_block
    }

    /// Bytes queued and not yet sent.
    #[must_use]
    pub fn queued(&self) -> usize {
        self.out.queued()
    }

    /// Closes the connection once what is queued is sent: then the engine shuts down its
    /// writing side (the peer reads the end of the stream) and discards what the peer still
    /// sends until it closes too, lingering as for HTTP (at most 256 KiB, for at most the
    /// drain deadline), so the peer is not reset before it read the last bytes. No more
    /// events come; nothing more can be written.
    pub fn close(&mut self) {
        self.st.close = true;
    }

    /// [`close`](Self::close) was called.
    #[must_use]
    pub fn is_closing(&self) -> bool {
        self.st.close
    }

    /// The server is shutting down (after [`UpgradeEvent::Shutdown`]).
    #[must_use]
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// A block of at least `len` bytes from the engine's pool (see
    /// [`Exchange::rent`](crate::Exchange::rent)); `None` when the pool cannot give one.
    #[must_use]
    pub fn rent(&self, len: usize) -> Option<PoolBuf> {
        self.ctx.blocks.block(len)
    }

    /// The size of the pool's large class: the largest block [`rent`](Self::rent) gives.
    #[must_use]
    pub fn large_block(&self) -> usize {
        self.ctx.large_block
    }

    /// The connection's TLS session, or `None` for plain HTTP (see [`Exchange::tls`]).
    ///
    /// [`Exchange::tls`]: crate::Exchange::tls
    #[must_use]
    pub fn tls(&self) -> Option<TlsInfo<'_>> {
        self.ctx.tls
    }

    /// A snapshot of the server's counters and pool. Allocates nothing.
    #[must_use]
    pub fn stats(&self) -> ServerStats {
        self.ctx.shared.snapshot()
    }

    /// The token that wakes this connection from anywhere: hand it with the worker's
    /// [`Mailbox`](crate::Mailbox) ([`WorkerInfo::mailbox`](crate::WorkerInfo::mailbox)) to
    /// whatever has news for it, which calls [`Mailbox::wake`](crate::Mailbox::wake); the
    /// service then gets [`UpgradeEvent::Wake`]. A token outlives its connection harmlessly:
    /// a wake-up for a connection that ended is dropped.
    #[must_use]
    pub fn token(&self) -> Deferred {
        self.token
    }
}

/// The smallest room a write looks for in the last block before it takes a fresh one.
const MIN_PIECE: usize = 64;

/// A `101 Switching Protocols` being written: add the protocol's headers, then
/// [`switch`](Self::switch). Dropped unfinished, it is a misuse: a `500` goes in its place.
#[must_use = "end the 101 with switch()"]
#[derive(Debug)]
pub struct Switch<'e, 'a> {
    pub(crate) ex: &'e mut Exchange<'a>,
    pub(crate) error: Option<ResponseError>,
}

impl Switch<'_, '_> {
    // `Sec-WebSocket-Accept`, say; `Connection` and `Upgrade` are the engine's.
    header_methods!(put_raw);

    /// Ends the `101`: from the next event on, the connection is the service's
    /// ([`Service::upgraded`](crate::Service::upgraded) gets [`UpgradeEvent::Start`] once the
    /// call returns).
    ///
    /// # Errors
    /// A misuse earlier in this `101` (a reserved or invalid header) or
    /// [`ResponseError::NoRoom`]; the client then gets a `500` and the connection is not
    /// switched.
    pub fn switch(self) -> Result<(), ResponseError> {
        if let Some(e) = self.error {
            return Err(self.ex.fail(e));
        }
        self.ex.put_raw(&[b"\r\n\r\n"])?;
        self.ex.switched();
        Ok(())
    }
}

/// Whether `req` may switch to `protocol` on an exchange in `st`: the checks of
/// [`Exchange::switch_protocols`](crate::Exchange::switch_protocols).
pub(crate) fn check(
    req: &Request<'_, '_>,
    protocol: &[u8],
    st: &ExchangeState,
    h2c: bool,
) -> Result<(), UpgradeError> {
    if st.progress != Progress::NotStarted {
        return Err(UpgradeError::AlreadyStarted);
    }
    if protocol.is_empty() || !is_field_name(protocol_name(protocol)) {
        return Err(UpgradeError::InvalidProtocol);
    }
    if req.version() != Version::Http11 || st.head_only() {
        return Err(UpgradeError::NotHttp11);
    }
    if st.has_body() {
        return Err(UpgradeError::HasBody);
    }
    if !st.is(flag::KEEP_ALIVE) || st.is(flag::CLOSE) {
        return Err(UpgradeError::Closing);
    }
    if !req.connection_upgrade() || !offers(req.get(KnownHeader::Upgrade), protocol) {
        return Err(UpgradeError::NotOffered);
    }
    if !h2c && protocol_name(protocol).eq_ignore_ascii_case(b"h2c") {
        return Err(UpgradeError::H2cRefused);
    }
    Ok(())
}

/// An `Upgrade` field value to send (RFC 9110 §7.8): a field value (no control byte but HTAB)
/// that is a comma-separated list of `protocol-name [ "/" protocol-version ]`, both tokens,
/// with optional whitespace around each.
pub(crate) fn is_protocol_list(v: &[u8]) -> bool {
    is_field_value(v)
        && v.split(|&b| b == b',').all(|item| {
            item.trim_ascii()
                .splitn(2, |&b| b == b'/')
                .all(is_field_name)
        })
}

/// The name of `protocol`, without its `/version`.
fn protocol_name(protocol: &[u8]) -> &[u8] {
    protocol.split(|&b| b == b'/').next().unwrap_or_default()
}

/// Whether an `Upgrade` field value lists `protocol` (RFC 9110 §7.8: a comma-separated list
/// of `name[/version]`, compared case-insensitively). A protocol asked for without a version
/// matches any version offered.
fn offers(field: Option<&[u8]>, protocol: &[u8]) -> bool {
    let Some(field) = field else {
        return false;
    };
    let versioned = protocol.contains(&b'/');
    field.split(|&b| b == b',').any(|item| {
        let item = item.trim_ascii();
        let item = if versioned { item } else { protocol_name(item) };
        item.eq_ignore_ascii_case(protocol)
    })
}

#[cfg(test)]
mod tests {
    use super::{is_protocol_list, offers};

    #[test]
    fn protocol_lists() {
        for ok in [&b"websocket"[..], b"echo, echo/2", b"h2c,\tHTTP/2.0 , a/b"] {
            assert!(is_protocol_list(ok), "{ok:?}");
        }
        // Empty elements, versions or names, a second `/`, a non-token byte, a bare CR.
        for bad in [
            &b""[..],
            b"echo,",
            b" , echo",
            b"echo/",
            b"/2",
            b"a/b/c",
            b"e cho",
            b"echo\r\nX: 1",
            b"\x0cecho",
        ] {
            assert!(!is_protocol_list(bad), "{bad:?}");
        }
    }

    #[test]
    fn offered_protocols() {
        assert!(offers(Some(b"websocket"), b"websocket"));
        assert!(offers(Some(b"WebSocket"), b"websocket"));
        assert!(offers(Some(b"h2c, websocket"), b"websocket"));
        assert!(offers(Some(b"foo/2 ,bar"), b"foo"));
        assert!(offers(Some(b"foo/2"), b"foo/2"));
        assert!(!offers(Some(b"foo/2"), b"foo/3"));
        assert!(!offers(Some(b"websockets"), b"websocket"));
        assert!(!offers(None, b"websocket"));
    }
}
