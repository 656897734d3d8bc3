//! WebSocket (RFC 6455) as a service: the handshake, then messages in and out over an upgraded
//! connection, with [`bufslab_ws`]'s codec and no allocation per message. Feature `ws` (on by
//! default).
//!
//! A service answers the handshake in [`Service::head`](crate::Service::head) with
//! [`WebSocket::accept`], keeps the [`WebSocket`] in its per-connection
//! [`State`](crate::Service::State), and forwards [`Service::upgraded`](crate::Service::upgraded)
//! and [`Service::upgrade_ended`](crate::Service::upgrade_ended) to it with a [`WsHandler`]:
//!
//! ```no_run
//! use bufslab_http::Request;
//! use bufslab_server::ws::{Message, WebSocket, WsConfig, WsHandler, WsSender};
//! use bufslab_server::{Config, Exchange, Server, Service, UpgradeEvent, Upgraded, WorkerInfo};
//!
//! struct Echo;
//!
//! impl WsHandler for Echo {
//!     fn message(&mut self, msg: Message<'_>, ws: &mut WsSender<'_, '_>) {
//!         // Whole messages, and the fragments of larger ones, go back as they came.
//!         let _ = ws.fragment(msg.kind, msg.data, msg.first, msg.last);
//!     }
//! }
//!
//! impl Service for Echo {
//!     type State = Option<WebSocket>;
//!
//!     fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, ws: &mut Self::State) {
//!         if req.path() == b"/ws" {
//!             // Answers 101, or 400/426 itself.
//!             *ws = WebSocket::accept(req, ex, WsConfig::default()).ok();
//!         } else {
//!             let _ = ex.respond(404).body(b"");
//!         }
//!     }
//!
//!     fn upgraded(&mut self, ev: UpgradeEvent<'_>, up: &mut Upgraded<'_>, ws: &mut Self::State) {
//!         WebSocket::on_upgraded(ws, ev, up, self);
//!     }
//!
//!     fn upgrade_ended(&mut self, ws: &mut Self::State) {
//!         WebSocket::on_ended(ws, self);
//!     }
//! }
//!
//! let server = Server::start(Config::default(), |_: WorkerInfo| Echo)?;
//! server.join()?;
//! # Ok::<(), bufslab_server::ServerError>(())
//! ```
//!
//! What the adapter does for the handler:
//!
//! * **Messages** up to [`WsConfig::buffer`] bytes arrive whole ([`Message::first`] and
//!   [`Message::last`] both set), handed over from the receive block where the whole
//!   message came in one (no copy), else gathered in one block rented from the engine's pool
//!   for the time the message takes, and validated whole before the handler sees a byte: a text
//!   message that is not UTF-8 never reaches it. A larger message arrives in fragments of
//!   `buffer` bytes (the last one shorter, possibly empty), each gathered the same way: a
//!   violation found later in it (invalid UTF-8 past what was delivered) closes the
//!   connection after earlier fragments were delivered; nothing of the fragment being
//!   gathered is. An echo sends each fragment back as a frame: a 16 MiB message is about a
//!   thousand frames of 16 KiB, not one per receive block.
//! * **Control frames**: a ping is answered with its pong at once; a pong is handed to
//!   [`WsHandler::pong`]; the peer's close is answered with the same code, then the connection
//!   closes (the engine sends the frame, shuts down its writing side, and drains).
//! * **A frame the adapter owes that finds no room** (a pong, the answer to a close, the close
//!   of a violation or a shutdown, when the pool is dry or the peer leaves the output queue
//!   full) fails the connection without it (RFC 6455 §7.1.7), as a handler does whose send
//!   was refused: a peer waiting for a pong sees the connection close rather than wait on,
//!   and the handler hears `1006`.
//! * **Violations** of RFC 6455 (a reserved bit or opcode, an unmasked frame, a frame or
//!   message over [`WsConfig::limits`], invalid UTF-8, a bad close frame) close the
//!   connection with the code the codec names (1002, 1007, 1009); the handler hears of it in
//!   [`WsHandler::closed`].
//! * **Shutdown**: a graceful server shutdown sends `1001 Going Away` and closes.
//!
//! Limits: no extensions (permessage-deflate offers are declined by not answering them), no
//! subprotocol choice yet (`Sec-WebSocket-Protocol` is not answered), and sends are
//! backpressured by the connection's output queue: a handler answering a delivery has
//! [`WsSender::write_room`] bytes (the whole queue: `Config::out_blocks` blocks of the large
//! class, 512 KiB by default) and a send that does not fit is refused ([`WsError::NoRoom`])
//! rather than queued.

use std::fmt;

use bufslab::PoolBuf;
use bufslab_http::{KnownHeader, Method, Request};
use bufslab_ws::{
    encode_close, encode_control, encode_pong, frames, Decoder, Event, FrameHeader, OpCode, Role,
    MAX_CONTROL_PAYLOAD, MAX_HEADER_LEN,
};
use bytes::BufMut;

pub use bufslab_ws::{CloseCode, Limits, MessageKind};

use crate::exchange::Exchange;
use crate::upgrade::{UpgradeError, UpgradeEvent, Upgraded};

/// How a [`WebSocket`] connection reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WsConfig {
    /// The largest frame and message accepted (beyond: close `1009` as soon as the header
    /// says so). Default: 16 MiB per frame, 64 MiB per message.
    pub limits: Limits,
    /// Messages up to this many bytes are delivered whole; larger ones in fragments of this
    /// many bytes. Gathered in one block rented from the engine's pool, so at most the pool's
    /// large class ([`Config::large_block`](crate::Config::large_block), 32 KiB by default):
    /// beyond, it is cut to that. 0 delivers every message in fragments as the receive
    /// blocks bring them (no copy; also what happens when the pool has no block). Default
    /// 16 KiB.
    pub buffer: usize,
}

impl Default for WsConfig {
    fn default() -> Self {
        WsConfig {
            limits: Limits::default(),
            buffer: 16 << 10,
        }
    }
}

impl WsConfig {
    /// The default with `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The default with `buffer`.
    #[must_use]
    pub fn with_buffer(mut self, buffer: usize) -> Self {
        self.buffer = buffer;
        self
    }
}

/// Why [`WebSocket::accept`] did not switch: the response saying so was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeRefused {
    /// Not a `GET`: `405`.
    Method,
    /// The request cannot switch (not an upgrade to `websocket`, a body, HTTP/1.0, the
    /// connection closing): `400`.
    Upgrade(UpgradeError),
    /// A bad `Sec-WebSocket-Key` (`400`) or a `Sec-WebSocket-Version` other than 13 (`426`
    /// with `Sec-WebSocket-Version: 13` and `Upgrade: websocket`).
    Handshake(bufslab_ws::HandshakeError),
    /// The `101` could not be written (the pool is dry): the engine answers `503`.
    Response(crate::ResponseError),
}

impl fmt::Display for HandshakeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeRefused::Method => f.write_str("a WebSocket handshake is a GET"),
            HandshakeRefused::Upgrade(e) => write!(f, "not switched: {e}"),
            HandshakeRefused::Handshake(e) => write!(f, "bad handshake: {e}"),
            HandshakeRefused::Response(e) => write!(f, "101 not written: {e}"),
        }
    }
}

impl std::error::Error for HandshakeRefused {}

/// Why a [`WsSender`] send was refused. Nothing of the frame was queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WsError {
    /// A close frame was sent or received: nothing more goes out.
    Closed,
    /// The connection's output cannot take the frame now (over [`WsSender::write_room`], or
    /// the pool is dry).
    NoRoom,
    /// A control frame payload over 125 bytes, or a close code that may not be sent.
    InvalidControl,
}

impl fmt::Display for WsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WsError::Closed => "the WebSocket is closing",
            WsError::NoRoom => "no output room for the frame",
            WsError::InvalidControl => "control payload over 125 bytes, or an invalid close code",
        })
    }
}

impl std::error::Error for WsError {}

/// A message, or a fragment of one larger than [`WsConfig::buffer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Message<'a> {
    /// Text (valid UTF-8 as a whole message) or binary.
    pub kind: MessageKind,
    /// The bytes: the whole message when `first` and `last` are both set, else the next
    /// fragment (possibly empty, for the last one). A text fragment may end in the middle of a
    /// code point.
    pub data: &'a [u8],
    /// The message's first bytes.
    pub first: bool,
    /// The message's last bytes.
    pub last: bool,
}

impl<'a> Message<'a> {
    /// The whole message as text, when it is a whole text message.
    #[must_use]
    pub fn text(&self) -> Option<&'a str> {
        if self.kind == MessageKind::Text && self.first && self.last {
            std::str::from_utf8(self.data).ok()
        } else {
            None
        }
    }
}

/// What a WebSocket application does with its connection's events. Every method runs on the
/// worker's thread; a handler is usually the service itself.
pub trait WsHandler {
    /// The handshake is done: frames sent now are the first the client gets.
    ///
    /// The default does nothing.
    fn open(&mut self, ws: &mut WsSender<'_, '_>) {
        let _ = ws;
    }

    /// A message (or a fragment of a large one, see [`Message`]) arrived.
    fn message(&mut self, msg: Message<'_>, ws: &mut WsSender<'_, '_>);

    /// The connection was woken ([`Mailbox::wake`](crate::Mailbox::wake) with
    /// [`WsSender::token`]) and its output is all sent: send what it was woken for.
    ///
    /// The default does nothing.
    fn wake(&mut self, ws: &mut WsSender<'_, '_>) {
        let _ = ws;
    }

    /// A pong arrived (pings are answered by the adapter).
    ///
    /// The default ignores it.
    fn pong(&mut self, payload: &[u8], ws: &mut WsSender<'_, '_>) {
        let _ = (payload, ws);
    }

    /// The WebSocket is closing or closed, at most once per connection, for a reason other
    /// than the handler's own [`WsSender::close`]: `code` is the peer's close
    /// code (`1005` when its close frame had none), the code of the violation the connection
    /// was failed for, `1001` on the server's shutdown, or `1006` when the connection ended
    /// without a close frame sent or received (the peer went away, the idle timeout, or a
    /// frame the adapter owed found no room: see the [module](self) docs).
    ///
    /// The default does nothing.
    fn closed(&mut self, code: CloseCode) {
        let _ = code;
    }
}

/// Sends frames on a WebSocket: handed to each [`WsHandler`] call.
pub struct WsSender<'u, 'a> {
    up: &'u mut Upgraded<'a>,
    st: &'u mut Flags,
}

/// Where a [`WebSocket`]'s close stands.
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    /// A close frame was sent or received: nothing more is read or sent.
    closed: bool,
    /// [`WsHandler::closed`] was called, or the handler closed itself.
    told: bool,
}

impl fmt::Debug for WsSender<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsSender")
            .field("closed", &self.st.closed)
            .finish()
    }
}

impl WsSender<'_, '_> {
    /// Sends a text message in one frame.
    ///
    /// # Errors
    /// [`WsError`]; nothing was queued.
    pub fn text(&mut self, text: &str) -> Result<(), WsError> {
        self.frame(OpCode::Text, text.as_bytes(), true)
    }

    /// Sends a binary message in one frame.
    ///
    /// # Errors
    /// [`WsError`]; nothing was queued.
    pub fn binary(&mut self, data: &[u8]) -> Result<(), WsError> {
        self.frame(OpCode::Binary, data, true)
    }

    /// Sends a message of `kind` in one frame; text must be UTF-8 (a [`Message`]'s is).
    ///
    /// # Errors
    /// [`WsError`]; nothing was queued.
    pub fn send(&mut self, kind: MessageKind, data: &[u8]) -> Result<(), WsError> {
        self.fragment(kind, data, true, true)
    }

    /// Sends one frame of a fragmented message of `kind`: the first (`first`) opens it, the
    /// last (`last`) ends it, and no other data message may be sent in between. A message
    /// received in fragments goes back out the same way, in constant memory.
    ///
    /// # Errors
    /// [`WsError`]; nothing was queued.
    pub fn fragment(
        &mut self,
        kind: MessageKind,
        data: &[u8],
        first: bool,
        last: bool,
    ) -> Result<(), WsError> {
        let op = match (first, kind) {
            (false, _) => OpCode::Continuation,
            (true, MessageKind::Text) => OpCode::Text,
            (true, MessageKind::Binary) => OpCode::Binary,
        };
        self.frame(op, data, last)
    }

    /// Sends a ping (at most 125 bytes); its pong comes to [`WsHandler::pong`].
    ///
    /// # Errors
    /// [`WsError`]; nothing was queued.
    pub fn ping(&mut self, payload: &[u8]) -> Result<(), WsError> {
        let mut out = [0u8; 2 + MAX_CONTROL_PAYLOAD];
        let n = encode_control(&mut out, OpCode::Ping, payload, None)
            .map_err(|_| WsError::InvalidControl)?;
        self.raw(out.get(..n).unwrap_or_default())
    }

    /// Starts the closing handshake with `code` and `reason` (at most 123 bytes): the close
    /// frame goes out, then the connection closes (the engine shuts down its side and drains
    /// the peer's answer). [`WsHandler::closed`] is not called for it.
    ///
    /// A handler that cannot go on (a send was refused: the pool is dry) closes this way:
    /// where the close frame itself finds no room, the connection closes without it, as RFC
    /// 6455 §7.1.7 fails a connection, rather than staying open with a message missing.
    ///
    /// # Errors
    /// [`WsError::InvalidControl`] (an invalid code, or a reason over 123 bytes; nothing
    /// changed) and [`WsError::Closed`] (closing already); [`WsError::NoRoom`]: the connection
    /// closes, without the frame.
    pub fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), WsError> {
        let mut out = [0u8; 2 + MAX_CONTROL_PAYLOAD];
        let n = encode_close(&mut out, code, reason, None).map_err(|_| WsError::InvalidControl)?;
        let sent = self.raw(out.get(..n).unwrap_or_default());
        if sent == Err(WsError::Closed) {
            return sent;
        }
        self.end();
        self.st.told = true;
        sent
    }

    /// Bytes of payload one send can take now (less the frame's header).
    #[must_use]
    pub fn write_room(&self) -> usize {
        if self.st.closed {
            return 0;
        }
        self.up.write_room().saturating_sub(MAX_HEADER_LEN)
    }

    /// The token that wakes this connection ([`Upgraded::token`]).
    #[must_use]
    pub fn token(&self) -> crate::Deferred {
        self.up.token()
    }

    /// A close frame was sent or received.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.st.closed
    }

    fn frame(&mut self, op: OpCode, data: &[u8], fin: bool) -> Result<(), WsError> {
        let mut head = [0u8; MAX_HEADER_LEN];
        let h = FrameHeader::new(op, data.len() as u64).with_fin(fin);
        let n = h.write(&mut head).map_err(|_| WsError::InvalidControl)?;
        if self.st.closed {
            return Err(WsError::Closed);
        }
        self.up
            .write_vectored(&[head.get(..n).unwrap_or_default(), data])
            .map_err(|_| WsError::NoRoom)
    }

    fn raw(&mut self, frame: &[u8]) -> Result<(), WsError> {
        if self.st.closed {
            return Err(WsError::Closed);
        }
        self.up.write(frame).map_err(|_| WsError::NoRoom)
    }

    /// Closes the connection: no frame goes out after what is queued.
    fn end(&mut self) {
        self.st.closed = true;
        self.up.close();
    }

    /// Sends the close frame `frame` the adapter owes (none when a close was sent already),
    /// closes, and tells `handler` `code`, or `1006` where the frame found no room: the
    /// connection is failed without it (RFC 6455 §7.1.7).
    fn close_owed<H: WsHandler + ?Sized>(
        &mut self,
        frame: &[u8],
        code: CloseCode,
        handler: &mut H,
    ) {
        let sent = self.st.closed || self.raw(frame).is_ok();
        self.end();
        tell(
            self.st,
            handler,
            if sent { code } else { CloseCode::ABNORMAL },
        );
    }
}

/// Tells `handler` why the connection closes, the first time only.
fn tell<H: WsHandler + ?Sized>(st: &mut Flags, handler: &mut H, code: CloseCode) {
    if !std::mem::replace(&mut st.told, true) {
        handler.closed(code);
    }
}

/// One WebSocket connection's reading state: keep it in the service's per-connection
/// [`State`](crate::Service::State) (about 300 bytes, no heap) and forward the upgraded
/// connection's events to [`on_event`](Self::on_event).
#[derive(Debug)]
pub struct WebSocket {
    dec: Decoder,
    cfg: WsConfig,
    /// The message being gathered, while it fits [`WsConfig::buffer`].
    msg: Option<PoolBuf>,
    kind: MessageKind,
    /// The open message's first fragment went to the handler.
    started: bool,
    st: Flags,
}

impl WebSocket {
    /// Answers a WebSocket handshake request (RFC 6455 §4.2): checks it is a `GET` offering
    /// `Upgrade: websocket` with `Connection: upgrade`, a valid `Sec-WebSocket-Key` and
    /// `Sec-WebSocket-Version: 13`, and writes the `101` with `Sec-WebSocket-Accept`. On a bad
    /// handshake it writes the refusal itself (`400`, `405`, or `426` with
    /// `Sec-WebSocket-Version: 13` and `Upgrade: websocket`) and says why. No extension or
    /// subprotocol is accepted.
    ///
    /// # Errors
    /// [`HandshakeRefused`]: the response was written; the connection is not switched.
    pub fn accept(
        req: &Request<'_, '_>,
        ex: &mut Exchange<'_>,
        cfg: WsConfig,
    ) -> Result<WebSocket, HandshakeRefused> {
        if req.method() != Method::Get {
            let _ = ex.respond(405).header(KnownHeader::Allow, b"GET").body(b"");
            return Err(HandshakeRefused::Method);
        }
        let key = req.get(KnownHeader::SecWebSocketKey).unwrap_or_default();
        let version = req
            .get(KnownHeader::SecWebSocketVersion)
            .unwrap_or_default();
        let accept = match bufslab_ws::accept(key, version) {
            Ok(a) => a,
            Err(e) => {
                let r = ex.respond(e.status());
                // RFC 6455 §4.4 names the versions; RFC 9110 §15.5.22 the protocol.
                let r = if e.status() == 426 {
                    r.header(KnownHeader::SecWebSocketVersion, b"13")
                        .offer_upgrade(b"websocket")
                } else {
                    r
                };
                let _ = r.body(b"");
                return Err(HandshakeRefused::Handshake(e));
            }
        };
        let switch = match ex.switch_protocols(req, b"websocket") {
            Ok(s) => s,
            Err(e) => {
                let _ = ex.respond(400).body(b"");
                return Err(HandshakeRefused::Upgrade(e));
            }
        };
        switch
            .header(KnownHeader::SecWebSocketAccept, &accept)
            .switch()
            .map_err(HandshakeRefused::Response)?;
        Ok(WebSocket {
            dec: Decoder::with_limits(Role::Server, cfg.limits),
            cfg,
            msg: None,
            kind: MessageKind::Binary,
            started: false,
            st: Flags::default(),
        })
    }

    /// Handles an event of the upgraded connection with `handler`.
    pub fn on_event<H: WsHandler + ?Sized>(
        &mut self,
        event: UpgradeEvent<'_>,
        up: &mut Upgraded<'_>,
        handler: &mut H,
    ) {
        match event {
            UpgradeEvent::Start => {
                handler.open(&mut WsSender {
                    up,
                    st: &mut self.st,
                });
            }
            UpgradeEvent::Data(data) => self.read(data, up, handler),
            UpgradeEvent::Wake => {
                if !self.st.closed {
                    handler.wake(&mut WsSender {
                        up,
                        st: &mut self.st,
                    });
                }
            }
            UpgradeEvent::PeerClosed => self.tell(handler, CloseCode::ABNORMAL),
            UpgradeEvent::Shutdown => {
                // The message being gathered will not be delivered: its block goes back first,
                // where it may be the one the close frame needs.
                self.msg = None;
                let mut ws = WsSender {
                    up,
                    st: &mut self.st,
                };
                ws.close_owed(&frames::CLOSE_GOING_AWAY, CloseCode::GOING_AWAY, handler);
            }
        }
        if self.st.closed {
            self.msg = None;
        }
    }

    /// The connection ended ([`Service::upgrade_ended`](crate::Service::upgrade_ended)): the
    /// handler hears of it (`1006`) unless it already heard of a close.
    pub fn ended<H: WsHandler + ?Sized>(&mut self, handler: &mut H) {
        self.msg = None;
        self.tell(handler, CloseCode::ABNORMAL);
    }

    /// [`Service::upgraded`](crate::Service::upgraded) for a service whose connection state
    /// is an `Option<WebSocket>` set by [`accept`](Self::accept): the socket's events go to
    /// `handler`, and an upgrade that is not this WebSocket is closed.
    pub fn on_upgraded<H: WsHandler + ?Sized>(
        ws: &mut Option<WebSocket>,
        event: UpgradeEvent<'_>,
        up: &mut Upgraded<'_>,
        handler: &mut H,
    ) {
        match ws {
            Some(ws) => ws.on_event(event, up, handler),
            None => up.close(),
        }
    }

    /// [`Service::upgrade_ended`](crate::Service::upgrade_ended) for the same state: see
    /// [`ended`](Self::ended).
    pub fn on_ended<H: WsHandler + ?Sized>(ws: &mut Option<WebSocket>, handler: &mut H) {
        if let Some(ws) = ws {
            ws.ended(handler);
        }
    }

    fn tell<H: WsHandler + ?Sized>(&mut self, handler: &mut H, code: CloseCode) {
        tell(&mut self.st, handler, code);
    }

    fn read<H: WsHandler + ?Sized>(
        &mut self,
        buf: &mut [u8],
        up: &mut Upgraded<'_>,
        handler: &mut H,
    ) {
        let WebSocket {
            dec,
            cfg,
            msg,
            kind,
            started,
            st,
        } = self;
        let buffer = cfg.buffer.min(up.large_block());
        let mut at = 0;
        // A message's first payload, left where the decoder unmasked it in `buf` (offset and
        // length) rather than copied into a gathering block: when its end follows in the same
        // receive block, as for most small messages, it goes to the handler from there, with
        // no block rented and no copy.
        let mut held: Option<(usize, usize)> = None;
        // Where `buf` starts, for the offset of a `Data` slice in it.
        let base = buf.as_ptr() as usize;
        while !st.closed {
            let step = match dec.decode(buf.get_mut(at..).unwrap_or_default()) {
                Ok(step) => step,
                Err(e) => {
                    // RFC 6455 §7.1.7: fail the connection with the code the codec names.
                    let code = e.close_code();
                    *msg = None;
                    let mut ws = WsSender {
                        up: &mut *up,
                        st: &mut *st,
                    };
                    ws.close_owed(&code.server_frame(), code, handler);
                    break;
                }
            };
            at += step.consumed;
            let Some(event) = step.event else {
                break;
            };
            let mut ws = WsSender {
                up: &mut *up,
                st: &mut *st,
            };
            match event {
                Event::MessageStart(k) => {
                    *kind = k;
                    *started = false;
                }
                Event::Data(data) if held.is_none() && msg.is_none() && !*started => {
                    if data.len() <= buffer {
                        // `data` is a slice of `buf` (the decoder unmasks in place).
                        let offset = (data.as_ptr() as usize).wrapping_sub(base);
                        held = Some((offset, data.len()));
                    } else {
                        gather(data, buffer, msg, *kind, started, handler, &mut ws);
                    }
                }
                Event::Data(data) => {
                    // More of a held message in the same block: it is gathered after all.
                    let next = (data.as_ptr() as usize).wrapping_sub(base);
                    let next = (next, data.len());
                    if let Some(first) = held.take() {
                        let data = buf.get(first.0..first.0 + first.1).unwrap_or_default();
                        gather(data, buffer, msg, *kind, started, handler, &mut ws);
                    }
                    let data = buf.get(next.0..next.0 + next.1).unwrap_or_default();
                    gather(data, buffer, msg, *kind, started, handler, &mut ws);
                }
                Event::MessageEnd => {
                    let m = msg.take();
                    let first = !std::mem::replace(started, false);
                    let data = match held.take() {
                        Some((offset, len)) => buf.get(offset..offset + len).unwrap_or_default(),
                        None => m.as_deref().unwrap_or_default(),
                    };
                    handler.message(
                        Message {
                            kind: *kind,
                            data,
                            first,
                            last: true,
                        },
                        &mut ws,
                    );
                }
                Event::Ping(payload) => {
                    let mut out = [0u8; 2 + MAX_CONTROL_PAYLOAD];
                    // A pong that finds no room fails the connection rather than leave the
                    // peer waiting for it (RFC 6455 §7.1.7).
                    if let Ok(n) = encode_pong(&mut out, payload, None) {
                        if ws.raw(out.get(..n).unwrap_or_default()).is_err() {
                            ws.end();
                            tell(ws.st, handler, CloseCode::ABNORMAL);
                        }
                    }
                }
                Event::Pong(payload) => handler.pong(payload, &mut ws),
                Event::Close(frame) => {
                    // Answered with the same code (RFC 6455 §5.5.1), then closed.
                    let code = frame.map(|f| f.code);
                    *msg = None;
                    match code {
                        Some(c) => ws.close_owed(&c.server_frame(), c, handler),
                        None => ws.close_owed(&frames::CLOSE_EMPTY, CloseCode::NO_STATUS, handler),
                    }
                }
                _ => {}
            }
        }
        // The held message goes on in the next receive block: gathered, as any other.
        if let (Some((offset, len)), false) = (held, st.closed) {
            let data = buf.get(offset..offset + len).unwrap_or_default();
            let mut ws = WsSender { up, st };
            gather(data, buffer, msg, *kind, started, handler, &mut ws);
        }
    }
}

/// Gathers `data`, payload of the open message of `kind`, into one block of `buffer` bytes
/// (`msg`), handing the block to the handler each time it fills: large messages go to the
/// handler (and an echo back out) in fragments of `buffer` bytes, not one per receive block.
/// Without a block (the pool is dry, or `buffer` is 0) `data` goes to the handler as it came.
fn gather<H: WsHandler + ?Sized>(
    mut data: &[u8],
    buffer: usize,
    msg: &mut Option<PoolBuf>,
    kind: MessageKind,
    started: &mut bool,
    handler: &mut H,
    ws: &mut WsSender<'_, '_>,
) {
    while !data.is_empty() {
        if msg.is_none() && buffer > 0 {
            *msg = ws.up.rent(buffer);
        }
        let Some(m) = msg.as_mut() else {
            let first = !std::mem::replace(started, true);
            handler.message(
                Message {
                    kind,
                    data,
                    first,
                    last: false,
                },
                ws,
            );
            return;
        };
        let room = buffer.saturating_sub(m.len()).min(m.spare_capacity());
        let (now, rest) = data.split_at(room.min(data.len()));
        m.put_slice(now);
        data = rest;
        if data.is_empty() {
            return;
        }
        let first = !std::mem::replace(started, true);
        handler.message(
            Message {
                kind,
                data: m,
                first,
                last: false,
            },
            ws,
        );
        m.clear();
    }
}
