//! What an application gives the engine: a [`Service`] per worker, made by a [`MakeService`].
//!
//! The engine calls a service with the events of each request, in the manner of h11's events
//! and may-minihttp's `HttpService`, on the worker thread that owns the connection:
//!
//! 1. [`Service::head`] with the parsed head, borrowed from the read block, and an
//!    [`Exchange`] to answer through. The service answers at once, or asks for the body with
//!    [`Exchange::read_body`];
//! 2. then, if it asked, [`Service::data`] with each piece of the decoded body as it arrives
//!    (Content-Length or chunked), and [`Service::end`] once the body is complete.
//!
//! The response may be started in any of these calls and must be complete when `end` returns
//! (or `head`, when the body is not read). A service that leaves it incomplete, or breaks a
//! rule of the protocol through the [`Exchange`], gets a `500` sent in its place (while no byte
//! of its response has gone out) or its connection closed (after).
//!
//! A service is `!Send` if it likes: each worker makes its own ([`MakeService::make`]) and it
//! never leaves that thread, so per-core state (caches, connections to a backend) needs no
//! lock.

use bufslab_http::Request;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::deferred::Mailbox;
use crate::exchange::Exchange;
use crate::upgrade::{UpgradeEvent, Upgraded};

/// An HTTP application: answers the requests of one worker's connections.
///
/// Every method runs on the worker's thread, between reads of its sockets: a service that
/// blocks stalls every connection of its worker.
///
/// # Examples
///
/// ```
/// use bufslab_http::{KnownHeader, Request};
/// use bufslab_server::{Exchange, Service};
///
/// struct Hello;
///
/// impl Service for Hello {
///     type State = ();
///
///     fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut ()) {
///         let status = if req.path() == b"/" { 200 } else { 404 };
///         let _ = ex
///             .respond(status)
///             .header(KnownHeader::ContentType, b"text/plain")
///             .body(b"Hello, World!");
///     }
/// }
/// ```
pub trait Service {
    /// What the service keeps of one request between its calls (`()` when it answers in
    /// [`head`](Self::head)): the engine holds one per connection, reset to its `Default`
    /// before each head and when the connection ends, so a service serving many connections
    /// at once needs no table of its own.
    ///
    /// `Send`, because a deferred exchange's answer is a `State` sent back from another
    /// thread ([`Mailbox::answer`]).
    type State: Default + Send + 'static;

    /// A request head arrived complete. Answer through `ex` now, or call
    /// [`Exchange::read_body`] to have the body delivered to [`data`](Self::data) and
    /// [`end`](Self::end) (and answer there).
    ///
    /// A body the service does not read is skipped unread when the connection can go on, or
    /// the connection closes after the response.
    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, state: &mut Self::State);

    /// A piece of the request body, decoded (no chunk framing), in order. Each piece is at
    /// most [`Exchange::write_room`] bytes, so writing it back out never blocks.
    ///
    /// The default ignores it.
    fn data(&mut self, data: &[u8], ex: &mut Exchange<'_>, state: &mut Self::State) {
        let _ = (data, ex, state);
    }

    /// The request body is complete (at once after `head` for a request without one). The
    /// response must be complete when this returns.
    ///
    /// The default does nothing.
    fn end(&mut self, ex: &mut Exchange<'_>, state: &mut Self::State) {
        let _ = (ex, state);
    }

    /// The connection's output drained while the service's response body is pulled
    /// ([`Exchange::pull`]): write the next part with [`Exchange::write`] (at least one byte,
    /// at most [`Exchange::write_room`] per write to be sure it fits), or end it
    /// ([`Exchange::finish`], or the last byte of a body of known length).
    ///
    /// The default writes nothing, which ends the connection.
    fn fill(&mut self, ex: &mut Exchange<'_>, state: &mut Self::State) {
        let _ = (ex, state);
    }

    /// The answer to an exchange the service deferred ([`Exchange::defer`]) arrived through
    /// the worker's [`Mailbox`]: `state` is what was sent. Write the response now; it must be
    /// complete when this returns.
    ///
    /// The default writes nothing, so a service that defers without it gets a 500.
    fn resume(&mut self, ex: &mut Exchange<'_>, state: &mut Self::State) {
        let _ = (ex, state);
    }

    /// The connection ended while the exchange in `state` was unfinished: its body not all
    /// read, or its response not complete (deferred, pulled, or streamed), because the peer
    /// closed or reset, a deadline passed, or the server shut down. Undo what the exchange
    /// started here (a half-written value, a reservation); a deferred answer that comes later
    /// is dropped by the engine.
    ///
    /// The engine drops `state` right after (whether or not this is called), so what it holds
    /// (a pooled block, say) goes back when the connection ends, not when its slot serves the
    /// next connection.
    ///
    /// The default does nothing.
    fn aborted(&mut self, state: &mut Self::State) {
        let _ = state;
    }

    /// An event of a connection the service switched to another protocol
    /// ([`Exchange::switch_protocols`]): [`UpgradeEvent::Start`] once, then
    /// [`Data`](UpgradeEvent::Data) as bytes arrive (those the client sent right behind the
    /// request head first), and [`PeerClosed`](UpgradeEvent::PeerClosed) or
    /// [`Shutdown`](UpgradeEvent::Shutdown). Write and close through `up`. `state` is the
    /// switched request's, kept for the connection's whole life (a decoder, a session).
    ///
    /// The default closes the connection at once.
    fn upgraded(
        &mut self,
        event: UpgradeEvent<'_>,
        up: &mut Upgraded<'_>,
        state: &mut Self::State,
    ) {
        let _ = (event, state);
        up.close();
    }

    /// An upgraded connection ended: closed by either side, cut by the idle timeout or the end
    /// of the shutdown grace period, or reset. `state` is dropped right after.
    ///
    /// The default does nothing.
    fn upgrade_ended(&mut self, state: &mut Self::State) {
        let _ = state;
    }
}

/// What a worker knows when it makes its service.
#[derive(Clone)]
#[non_exhaustive]
pub struct WorkerInfo {
    /// The worker's index, `0..workers`.
    pub id: usize,
    /// How many workers the server runs.
    pub workers: usize,
    /// A `Mailbox<S::State>`, typed again by [`mailbox`](Self::mailbox).
    mailbox: Arc<dyn Any + Send + Sync>,
}

impl fmt::Debug for WorkerInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerInfo")
            .field("id", &self.id)
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

impl WorkerInfo {
    pub(crate) fn new<T: Send + 'static>(id: usize, workers: usize, mailbox: Mailbox<T>) -> Self {
        WorkerInfo {
            id,
            workers,
            mailbox: Arc::new(mailbox),
        }
    }

    /// The worker's mailbox, where other threads send the answers to the exchanges its service
    /// deferred ([`Exchange::defer`]); `T` is the service's [`State`](Service::State). Clone it
    /// into them before serving.
    ///
    /// Returns `None` when `T` is not the service's `State`.
    #[must_use]
    pub fn mailbox<T: Send + 'static>(&self) -> Option<Mailbox<T>> {
        self.mailbox.downcast_ref::<Mailbox<T>>().cloned()
    }
}

/// Makes one [`Service`] per worker, on that worker's thread.
///
/// Any `Fn(WorkerInfo) -> S` is one.
///
/// # Examples
///
/// ```
/// use bufslab_server::{MakeService, WorkerInfo};
/// # use bufslab_server::{Exchange, Service};
/// # struct Counter { worker: usize, served: u64 }
/// # impl Service for Counter {
/// #     type State = ();
/// #     fn head(&mut self, _: &bufslab_http::Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut ()) {
/// #         self.served += 1;
/// #         let _ = ex.respond(204).body(b"");
/// #     }
/// # }
/// fn make(info: WorkerInfo) -> Counter {
///     Counter { worker: info.id, served: 0 }
/// }
/// fn takes<M: MakeService>(_: M) {}
/// takes(make);
/// ```
pub trait MakeService: Send + Sync + 'static {
    /// The service each worker runs.
    type Service: Service;

    /// Makes the service of the worker `info` describes. Called once per worker, on its
    /// thread, before it serves; may allocate.
    fn make(&self, info: WorkerInfo) -> Self::Service;
}

impl<S: Service, F: Fn(WorkerInfo) -> S + Send + Sync + 'static> MakeService for F {
    type Service = S;

    fn make(&self, info: WorkerInfo) -> S {
        self(info)
    }
}
