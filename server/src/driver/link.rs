//! What a driver drives: a connection's I/O-free core, behind its TLS layer when the listener
//! speaks TLS.
//!
//! A [`Link`] answers the driver's calls as the core alone would (`next`, the read room, the
//! output, the end of stream), so a driver moves bytes the same way whether they are
//! plaintext or records. A driver's turn runs through [`Wire`]: on the core itself for a
//! plain connection ([`Link::plain`]), so that path has no TLS check per call, and on the
//! `Link` for a TLS one. The rest of the core's methods (deadlines, deferred answers,
//! shutdown) are the core's own, reached through `Deref`.

use std::io::IoSlice;
use std::ops::{Deref, DerefMut};

use bufslab::{FreeList, PoolBuf};
use bufslab_http::Parser;

use crate::conn::{CloseReason, Conn, Env, Want};
use crate::service::Service;
use crate::stats::WorkerCounters;
use crate::tls::layer::TlsLayer;
use crate::tls::TlsConfig;

/// One connection slot's protocol state, as its driver sees it.
#[derive(Debug)]
pub(crate) struct Link<T> {
    conn: Conn<T>,
    tls: Option<Box<TlsLayer>>,
}

impl<T> Deref for Link<T> {
    type Target = Conn<T>;

    fn deref(&self) -> &Conn<T> {
        &self.conn
    }
}

impl<T> DerefMut for Link<T> {
    fn deref_mut(&mut self) -> &mut Conn<T> {
        &mut self.conn
    }
}

impl<T: Default> Link<T> {
    /// The core alone, when the connection is plain: a driver runs it through [`Wire`]
    /// without a TLS check per call.
    #[inline(always)]
    pub(crate) fn plain(&mut self) -> Option<&mut Conn<T>> {
        match self.tls {
            None => Some(&mut self.conn),
            Some(_) => None,
        }
    }

    /// A closed slot.
    pub(crate) fn new(parser: Parser, slot: usize, out_blocks: usize) -> Link<T> {
        Link {
            conn: Conn::new(parser, slot, out_blocks),
            tls: None,
        }
    }

    /// Starts a new connection in this slot: with `tls`, its handshake first. `false` when
    /// the handshake cannot start (then close the socket; the slot stays closed).
    pub(crate) fn open(&mut self, tls: Option<&TlsConfig>, counters: &WorkerCounters) -> bool {
        self.drop_tls(counters);
        if let Some(config) = tls {
            match TlsLayer::new(config.tls(), config.record_limit) {
                Ok(layer) => {
                    WorkerCounters::add(&counters.tls_handshakes, 1);
                    self.tls = Some(Box::new(layer));
                }
                Err(_) => return false,
            }
        }
        self.conn.open();
        true
    }

    /// Ends the connection, giving its blocks back.
    pub(crate) fn release(&mut self, counters: &WorkerCounters) {
        self.drop_tls(counters);
        self.conn.release();
    }

    /// Drops the TLS layer and its blocks; a handshake it was running no longer counts as in
    /// progress, and counts as failed.
    fn drop_tls(&mut self, counters: &WorkerCounters) {
        if let Some(tls) = self.tls.take() {
            if tls.is_handshaking() {
                WorkerCounters::sub(&counters.tls_handshakes, 1);
                WorkerCounters::add(&counters.tls_handshake_failures, 1);
            }
        }
    }

    /// What to do next (the core's [`Conn::next`], with the TLS work done first).
    #[inline(always)]
    pub(crate) fn next<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Want {
        match &mut self.tls {
            None => self.conn.next(env),
            Some(tls) => tls.next(&mut self.conn, env),
        }
    }

    /// The block to read into ([`Conn::read_buf`]; the ciphertext block under TLS).
    #[inline(always)]
    pub(crate) fn read_buf<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<&mut PoolBuf, Want> {
        match &mut self.tls {
            None => self.conn.read_buf(env),
            Some(tls) => tls.read_buf(env),
        }
    }

    /// `n` bytes were read into the room [`Wire::read_space`] gave.
    #[inline(always)]
    pub(crate) fn received(&mut self, n: usize) {
        match &mut self.tls {
            None => self.conn.received(n),
            Some(tls) => tls.received(n),
        }
    }

    /// Gives the read blocks back if they hold nothing.
    #[inline(always)]
    pub(crate) fn release_read_block(&mut self) {
        if let Some(tls) = &mut self.tls {
            tls.release_read_block();
        }
        self.conn.release_read_block();
    }

    /// Takes a block filled by the kernel ([`Conn::receive_block`]).
    #[inline(always)]
    pub(crate) fn receive_block<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        buf: PoolBuf,
    ) -> Option<PoolBuf> {
        match &mut self.tls {
            None => self.conn.receive_block(env, buf),
            Some(tls) => tls.receive_block(env, buf),
        }
    }

    /// Input is buffered: the core's, or ciphertext not yet opened.
    #[inline(always)]
    pub(crate) fn holds_input(&self) -> bool {
        match &self.tls {
            None => self.conn.holds_input(),
            Some(tls) => tls.holds_input() || self.conn.holds_input(),
        }
    }

    /// No request in progress and nothing to send (and no handshake running).
    #[inline(always)]
    pub(crate) fn is_idle(&self) -> bool {
        match &self.tls {
            None => self.conn.is_idle(),
            Some(tls) => self.conn.is_idle() && tls.is_quiet(),
        }
    }

    /// Pool blocks held.
    #[inline(always)]
    pub(crate) fn blocks(&self) -> usize {
        match &self.tls {
            None => self.conn.blocks(),
            Some(tls) => self.conn.blocks() + tls.blocks(),
        }
    }

    /// The output as slices ([`Conn::output`]; the records under TLS, one block).
    #[inline(always)]
    pub(crate) fn output<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
        match &self.tls {
            None => self.conn.output(slices),
            Some(tls) => tls.output(slices),
        }
    }

    /// The oldest output block's bytes.
    #[inline(always)]
    pub(crate) fn front(&self) -> &[u8] {
        match &self.tls {
            None => self.conn.front(),
            Some(tls) => tls.front(),
        }
    }

    /// Output blocks queued.
    #[inline(always)]
    pub(crate) fn output_blocks(&self) -> usize {
        match &self.tls {
            None => self.conn.output_blocks(),
            Some(tls) => tls.output_blocks(),
        }
    }

    /// `n` bytes of the output were sent.
    #[inline(always)]
    pub(crate) fn sent(&mut self, n: usize) {
        match &mut self.tls {
            None => self.conn.sent(n),
            Some(tls) => tls.sent(n),
        }
    }

    /// The queued output is the connection's last ([`Conn::closes_after_output`]). Under TLS
    /// never: the layer's `close_notify` goes out behind it first.
    #[inline(always)]
    pub(crate) fn closes_after_output(&self) -> bool {
        self.tls.is_none() && self.conn.closes_after_output()
    }

    /// The end of the peer's stream ([`Conn::peer_eof`]).
    #[inline(always)]
    pub(crate) fn peer_eof<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Option<CloseReason> {
        self.conn.peer_eof(env)
    }

    /// Our `close_notify`, when the worker closes a sound TLS connection without asking the
    /// core (idle on shutdown, or past its idle deadline), sealed into `out` (at least
    /// `bufslab_tls::record::ALERT_RECORD_LEN` bytes); its length, 0 when none is due.
    pub(crate) fn farewell(&mut self, out: &mut [u8]) -> usize {
        match &mut self.tls {
            Some(tls) if !tls.holds_output() => tls.farewell(out),
            _ => 0,
        }
    }
}

/// What a driver asks of a connection while it moves its bytes: the core itself for a plain
/// connection (so that path has no TLS check per call), or a [`Link`] for a TLS one. The
/// methods are those of the same names on [`Conn`] and [`Link`].
pub(crate) trait Wire<T: Default> {
    fn next<F: FreeList, S: Service<State = T>>(&mut self, env: &mut Env<'_, F, S>) -> Want;
    fn read_buf<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<&mut PoolBuf, Want>;
    fn release_read_block(&mut self);
    fn receive_block<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        buf: PoolBuf,
    ) -> Option<PoolBuf>;
    fn holds_input(&self) -> bool;
    fn blocks(&self) -> usize;
    fn closes_after_output(&self) -> bool;
    /// [`read_buf`](Self::read_buf)'s spare room.
    #[inline(always)]
    fn read_space<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<&mut [u8], Want> {
        self.read_buf(env).map(PoolBuf::spare_mut)
    }
    fn peer_eof<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Option<CloseReason>;
    fn peer_closed(&mut self) -> CloseReason;
    fn discarded(&mut self, n: usize) -> Want;
    fn output<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize;
    fn front(&self) -> &[u8];
    fn output_blocks(&self) -> usize;
    fn sent(&mut self, n: usize);
}

macro_rules! wire {
    ($ty:ident) => {
        impl<T: Default> Wire<T> for $ty<T> {
            #[inline(always)]
            fn next<F: FreeList, S: Service<State = T>>(
                &mut self,
                env: &mut Env<'_, F, S>,
            ) -> Want {
                $ty::next(self, env)
            }
            #[inline(always)]
            fn read_buf<F: FreeList, S: Service<State = T>>(
                &mut self,
                env: &mut Env<'_, F, S>,
            ) -> Result<&mut PoolBuf, Want> {
                $ty::read_buf(self, env)
            }
            #[inline(always)]
            fn release_read_block(&mut self) {
                $ty::release_read_block(self);
            }
            #[inline(always)]
            fn receive_block<F: FreeList, S: Service<State = T>>(
                &mut self,
                env: &mut Env<'_, F, S>,
                buf: PoolBuf,
            ) -> Option<PoolBuf> {
                $ty::receive_block(self, env, buf)
            }
            #[inline(always)]
            fn holds_input(&self) -> bool {
                $ty::holds_input(self)
            }
            #[inline(always)]
            fn blocks(&self) -> usize {
                $ty::blocks(self)
            }
            #[inline(always)]
            fn closes_after_output(&self) -> bool {
                $ty::closes_after_output(self)
            }
            #[inline(always)]
            fn peer_eof<F: FreeList, S: Service<State = T>>(
                &mut self,
                env: &mut Env<'_, F, S>,
            ) -> Option<CloseReason> {
                $ty::peer_eof(self, env)
            }
            #[inline(always)]
            fn peer_closed(&mut self) -> CloseReason {
                Conn::peer_closed(self)
            }
            #[inline(always)]
            fn discarded(&mut self, n: usize) -> Want {
                Conn::discarded(self, n)
            }
            #[inline(always)]
            fn output<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
                $ty::output(self, slices)
            }
            #[inline(always)]
            fn front(&self) -> &[u8] {
                $ty::front(self)
            }
            #[inline(always)]
            fn output_blocks(&self) -> usize {
                $ty::output_blocks(self)
            }
            #[inline(always)]
            fn sent(&mut self, n: usize) {
                $ty::sent(self, n);
            }
        }
    };
}

wire!(Conn);
wire!(Link);
