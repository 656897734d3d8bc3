//! One connection's TLS layer: between the driver, which moves ciphertext, and the I/O-free
//! core (`proto/conn/`), which sees only plaintext and does not know TLS is there.
//!
//! **Receiving.** The driver reads ciphertext into `rx` (a pooled block, moved to the large
//! class when a record needs more room than a small one has). When the core asks for input,
//! the next whole record is opened in place and its plaintext copied into the core's read
//! block, as much as that takes; the rest waits at the front of `rx` for the next ask. So the
//! core takes input at its own pace (a pipelined batch, a body under backpressure) exactly as
//! it does from a socket.
//!
//! **Sending.** When the core has output, it is copied into `tx` behind 5 bytes of header
//! room and sealed in place, as one record per 16 KiB (a pipelined batch of responses is one
//! record), and the core is told it was sent. The driver sends `tx`; the core produces more
//! only once `tx` is gone, which keeps the backpressure of the plain path.
//!
//! **Ending.** A close the core asks for (a `Connection: close`, a deadline, a shutdown) sends
//! `close_notify` first; a half-close (lingering close) sends it before the `FIN`. A record
//! that fails to open, or an alert from the peer, ends the connection with the alert
//! `bufslab_tls` names, and none of that record's bytes reach the core.
//!
//! **Memory.** `rx` and `tx` are held only while they hold bytes: an idle connection keeps
//! the record layer's keys and nothing from the pool. The handshake borrows a large block
//! for its flight (rustls writes a record only where the largest would fit).

use std::io::IoSlice;

use bufslab::{FreeList, PoolBuf};
use bufslab_tls::record::{
    Version, CONTROL_RECORD_LEN, HEADER_LEN, MAX_OVERHEAD, MAX_PLAINTEXT_LEN, MAX_RECORD_LEN,
};
use bufslab_tls::{AlertDescription, Config, Connection, Error, Handshake, Received, Status};
use bytes::{Buf, BufMut};

use crate::config::SMALL_BLOCK;
use crate::conn::{CloseReason, Conn, Env, Want};
use crate::out_queue::SEND_BLOCKS;
use crate::service::Service;
use crate::stats::WorkerCounters;
use crate::tls_info::TlsInfo;

/// Output below this is sealed into a small block, more into a large one (fewer records).
/// `MAX_OVERHEAD`: the most a record adds to its plaintext in either version.
const SMALL_OUTPUT: usize = SMALL_BLOCK - MAX_OVERHEAD;

enum State {
    Handshake(Box<Handshake>),
    Open(Box<Connection>),
    /// The handshake failed or a record did not open: only the alert is left to send.
    Failed,
}

/// What [`TlsLayer::feed`] did.
enum Feed {
    /// Plaintext went to the core.
    Fed,
    /// No whole record is buffered: read more.
    NeedMore,
    /// The peer's `close_notify` came: it sends no more.
    PeerClosed,
    /// A record failed: the alert is in `tx`, the end is set.
    Failed,
    /// The core cannot take input now (no block, or a head too large).
    Core(Want),
}

/// The TLS state of one connection; see the module docs.
pub(crate) struct TlsLayer {
    state: State,
    /// Ciphertext received and not yet opened; at its front, when `plain` says so, the
    /// plaintext of an opened record the core has not taken yet.
    rx: Option<PoolBuf>,
    /// `(plaintext left, trailer)`: the front of `rx` is an opened record's plaintext, then
    /// `trailer` bytes of it (inner type, padding, tag) to drop.
    plain: Option<(usize, usize)>,
    /// Sealed records (or the handshake's flight, or an alert) to send, from its front.
    tx: Option<PoolBuf>,
    /// Close with this reason once `tx` is sent.
    end: Option<CloseReason>,
    /// A half-close is owed once `tx` is sent.
    half_close: bool,
    /// `TlsConfig::record_limit`, applied when the handshake is done.
    record_limit: Option<u64>,
}

impl std::fmt::Debug for TlsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsLayer")
            .field("handshaking", &self.is_handshaking())
            .field("rx", &self.rx.as_ref().map(|b| b.len()))
            .field("tx", &self.tx.as_ref().map(|b| b.len()))
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl TlsLayer {
    /// The layer of a connection just accepted: its handshake starts.
    pub(crate) fn new(config: &Config, record_limit: Option<u64>) -> Result<TlsLayer, Error> {
        Ok(TlsLayer {
            state: State::Handshake(Box::new(Handshake::new(config)?)),
            rx: None,
            plain: None,
            tx: None,
            end: None,
            half_close: false,
            record_limit,
        })
    }

    /// The handshake is still running.
    pub(crate) fn is_handshaking(&self) -> bool {
        matches!(self.state, State::Handshake(_))
    }

    /// Pool blocks held.
    #[cold]
    #[inline(never)]
    pub(crate) fn blocks(&self) -> usize {
        usize::from(self.rx.is_some()) + usize::from(self.tx.is_some())
    }

    /// Ciphertext (or plaintext not yet taken) is buffered.
    #[cold]
    #[inline(never)]
    pub(crate) fn holds_input(&self) -> bool {
        self.rx.as_ref().is_some_and(|b| !b.is_empty())
    }

    /// The layer is ending the connection (an alert or `close_notify` owed or sent): the
    /// driver must run it to the close.
    pub(crate) fn is_ending(&self) -> bool {
        self.end.is_some() || self.half_close || matches!(self.state, State::Failed)
    }

    /// Nothing buffered either way, no handshake running, nothing ending: as far as TLS goes,
    /// the connection may close as idle.
    #[cold]
    #[inline(never)]
    pub(crate) fn is_quiet(&self) -> bool {
        !self.is_handshaking() && !self.holds_input() && !self.holds_output() && !self.is_ending()
    }

    /// The records to send as slices (one block).
    #[cold]
    #[inline(never)]
    pub(crate) fn output<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
        match slices.first_mut() {
            Some(first) if self.holds_output() => {
                *first = IoSlice::new(self.front());
                1
            }
            _ => 0,
        }
    }

    /// Output blocks queued: `tx`, when it holds records.
    #[cold]
    #[inline(never)]
    pub(crate) fn output_blocks(&self) -> usize {
        usize::from(self.holds_output())
    }

    /// Records wait to be sent.
    pub(crate) fn holds_output(&self) -> bool {
        self.tx.as_ref().is_some_and(|b| !b.is_empty())
    }

    /// Gives `rx` back if it holds nothing.
    #[cold]
    #[inline(never)]
    pub(crate) fn release_read_block(&mut self) {
        if self.rx.as_ref().is_some_and(|b| b.is_empty()) {
            self.rx = None;
        }
    }

    /// The core's next want, with the TLS work it implies done first; see the module docs.
    #[cold]
    #[inline(never)]
    pub(crate) fn next<T: Default, F: FreeList, S: Service<State = T>>(
        &mut self,
        conn: &mut Conn<T>,
        env: &mut Env<'_, F, S>,
    ) -> Want {
        loop {
            if self.holds_output() {
                return Want::Send;
            }
            self.tx = None;
            if std::mem::take(&mut self.half_close) {
                return Want::HalfClose;
            }
            if let Some(reason) = self.end {
                return Want::Close(reason);
            }
            match &mut self.state {
                State::Failed => return Want::Close(CloseReason::BadInput),
                State::Handshake(_) => match self.handshake(env) {
                    Ok(Some(want)) => return want,
                    Ok(None) => {}
                    Err(want) => return want,
                },
                State::Open(c) => {
                    if c.wants_control() {
                        if let Err(want) = self.write_control(env) {
                            return want;
                        }
                        continue;
                    }
                    let last = last_response_due(c, conn.output_capacity(), env.large_block);
                    let mut with_tls = env.with_tls(TlsInfo::new(c));
                    with_tls.shutting_down |= last;
                    let want = conn.next(&mut with_tls);
                    match want {
                        Want::Send => {
                            if let Err(want) = self.seal(conn, env) {
                                return want;
                            }
                        }
                        Want::Receive => match self.feed(conn, env) {
                            Feed::Fed | Feed::Failed => {}
                            // A TLS 1.2 client waits for the answer to its renegotiation:
                            // the refusal goes out now, not with the next response.
                            Feed::NeedMore if self.owes_renegotiation_refusal() => {}
                            Feed::NeedMore => {
                                self.release_read_block();
                                return Want::Receive;
                            }
                            Feed::PeerClosed => {
                                if let Some(reason) = conn.peer_eof(env) {
                                    self.finish(env, reason);
                                }
                            }
                            Feed::Core(want) => return want,
                        },
                        Want::HalfClose => {
                            self.close_notify(env);
                            self.half_close = true;
                        }
                        Want::Close(reason) => self.finish(env, reason),
                        want => return want,
                    }
                }
            }
        }
    }

    /// A TLS 1.2 renegotiation was refused and the `no_renegotiation` warning is still to be
    /// written.
    fn owes_renegotiation_refusal(&self) -> bool {
        matches!(&self.state, State::Open(c) if c.version() == Version::Tls12 && c.wants_control())
    }

    /// Runs the handshake one step: `Ok(None)` to go on, `Ok(Some(want))` or `Err(want)` to
    /// return it.
    fn handshake<F: FreeList, S: Service>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<Option<Want>, Want> {
        let State::Handshake(hs) = &mut self.state else {
            return Ok(None);
        };
        // rustls writes a record only where the largest would fit.
        let tx = rent(&mut self.tx, env, env.large_block.max(MAX_RECORD_LEN))?;
        let incoming: &mut [u8] = self.rx.as_deref_mut().unwrap_or_default();
        let progress = hs.advance(incoming, tx.spare_mut());
        tx.commit(progress.written);
        if let Some(rx) = self.rx.as_mut() {
            rx.advance(progress.consumed);
        }
        match progress.status {
            Ok(Status::NeedInput) if !self.holds_output() => {
                self.release_read_block();
                Ok(Some(Want::Receive))
            }
            Ok(Status::NeedInput | Status::FlushOutput) => Ok(None),
            Ok(Status::Done) => {
                WorkerCounters::sub(&env.counters.tls_handshakes, 1);
                let State::Handshake(hs) = std::mem::replace(&mut self.state, State::Failed) else {
                    return Ok(None);
                };
                match hs.into_connection() {
                    Ok(mut c) => {
                        if let Some(limit) = self.record_limit {
                            c.set_record_limit(limit);
                        }
                        self.state = State::Open(Box::new(c));
                    }
                    Err(_) => self.fail_handshake(env),
                }
                Ok(None)
            }
            // A status this version does not know, or a failure: rustls's alert (if any) is
            // in `tx`.
            Ok(_) | Err(_) => {
                WorkerCounters::sub(&env.counters.tls_handshakes, 1);
                self.fail_handshake(env);
                Ok(None)
            }
        }
    }

    fn fail_handshake<F: FreeList, S: Service>(&mut self, env: &mut Env<'_, F, S>) {
        WorkerCounters::add(&env.counters.tls_handshake_failures, 1);
        self.state = State::Failed;
        self.end = Some(CloseReason::BadInput);
    }

    /// Hands the core the plaintext of the next record, opening it if need be.
    fn feed<T: Default, F: FreeList, S: Service<State = T>>(
        &mut self,
        conn: &mut Conn<T>,
        env: &mut Env<'_, F, S>,
    ) -> Feed {
        loop {
            let Some(rx) = self.rx.as_mut() else {
                return Feed::NeedMore;
            };
            if let Some((left, trailer)) = self.plain {
                if rx.len() == left + trailer && !conn.holds_input() {
                    self.hand_over(conn, env, left);
                    return Feed::Fed;
                }
                let space = match conn.read_space(env) {
                    Ok(space) => space,
                    Err(want) => return Feed::Core(want),
                };
                let n = left.min(space.len());
                space[..n].copy_from_slice(&rx[..n]);
                conn.received(n);
                rx.advance(n);
                self.plain = if n == left {
                    rx.advance(trailer);
                    None
                } else {
                    Some((left - n, trailer))
                };
                return Feed::Fed;
            }
            let State::Open(c) = &mut self.state else {
                return Feed::NeedMore;
            };
            let len = match c.next_record_len(rx) {
                Ok(Some(len)) if len <= rx.len() => len,
                Ok(_) => return Feed::NeedMore,
                Err(e) => return self.fail(env, &e),
            };
            match c.open_in_place(&mut rx[..len]) {
                Ok(Received::Data(range)) => {
                    rx.advance(range.start);
                    self.plain = Some((range.len(), len - range.end));
                }
                Ok(Received::Closed) => {
                    rx.advance(len);
                    return Feed::PeerClosed;
                }
                // An empty record, a key update, a `user_canceled`: nothing for the core.
                Ok(_) => rx.advance(len),
                Err(e) => return self.fail(env, &e),
            }
        }
    }

    /// The usual case, `rx` holding one opened record with `left` bytes of plaintext (one
    /// request): the block itself becomes the core's read block, with no copy and no second
    /// block. What the core does not take stays at the front of `rx`.
    fn hand_over<T: Default, F: FreeList, S: Service<State = T>>(
        &mut self,
        conn: &mut Conn<T>,
        env: &mut Env<'_, F, S>,
        left: usize,
    ) {
        self.plain = None;
        if let Some(mut whole) = self.rx.take() {
            whole.truncate(left);
            if let Some(rest) = conn.receive_block(env, whole) {
                self.plain = Some((rest.len(), 0));
                self.rx = Some(rest);
            }
        }
    }

    /// A received record failed: the alert it calls for goes out, then the connection closes.
    fn fail<F: FreeList, S: Service>(&mut self, env: &mut Env<'_, F, S>, e: &Error) -> Feed {
        WorkerCounters::add(&env.counters.bad_requests, 1);
        self.rx = None;
        self.plain = None;
        if let Some(alert) = e.alert() {
            self.queue_alert(env, alert);
        }
        self.state = State::Failed;
        self.end = Some(CloseReason::BadInput);
        Feed::Failed
    }

    /// The core closes: our `close_notify` goes first where the connection is still sound.
    fn finish<F: FreeList, S: Service>(&mut self, env: &mut Env<'_, F, S>, reason: CloseReason) {
        if reason != CloseReason::Io {
            self.close_notify(env);
        }
        self.end = Some(reason);
    }

    /// Queues our `close_notify` (once; none after an alert).
    fn close_notify<F: FreeList, S: Service>(&mut self, env: &mut Env<'_, F, S>) {
        self.queue_alert(env, AlertDescription::CloseNotify);
    }

    /// Queues `alert`, the connection's last record: none after our `close_notify` or another
    /// alert.
    fn queue_alert<F: FreeList, S: Service>(
        &mut self,
        env: &mut Env<'_, F, S>,
        alert: AlertDescription,
    ) {
        let State::Open(c) = &mut self.state else {
            return;
        };
        if c.sent_close() {
            return;
        }
        if let Ok(tx) = rent(&mut self.tx, env, SMALL_BLOCK) {
            if let Ok(n) = c.write_alert(alert, tx.spare_mut()) {
                tx.commit(n);
            }
        }
    }

    /// Writes the `KeyUpdate` that is due before any more data.
    fn write_control<F: FreeList, S: Service>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<(), Want> {
        let State::Open(c) = &mut self.state else {
            return Ok(());
        };
        let tx = rent(&mut self.tx, env, SMALL_BLOCK)?;
        if control_record(c, tx, env.counters).is_err() {
            return Err(self.poison());
        }
        Ok(())
    }

    /// A sealing failure poisons the sending half: nothing more can go out.
    fn poison(&mut self) -> Want {
        self.state = State::Failed;
        Want::Close(CloseReason::Io)
    }

    /// Seals the core's output into `tx`, as much as it holds, and tells the core it went:
    /// one record per 16 KiB, each copied from the output as the core lists it.
    fn seal<T: Default, F: FreeList, S: Service<State = T>>(
        &mut self,
        conn: &mut Conn<T>,
        env: &mut Env<'_, F, S>,
    ) -> Result<(), Want> {
        let State::Open(c) = &mut self.state else {
            return Ok(());
        };
        let empty: &[u8] = &[];
        loop {
            // A keep-alive response is one block: taken as it is, without listing the queue.
            let one;
            let mut many;
            let slices: &[IoSlice<'_>] = if conn.output_blocks() <= 1 {
                one = [IoSlice::new(conn.front())];
                &one
            } else {
                many = [IoSlice::new(empty); SEND_BLOCKS];
                let n = conn.output(&mut many);
                &many[..n]
            };
            let n = slices.len();
            let queued: usize = slices.iter().map(|s| s.len()).sum();
            if queued == 0 {
                return Ok(());
            }
            let tx = match &mut self.tx {
                Some(tx) => tx,
                // Output beyond a small block goes into a large one (fewer records); without
                // a large block, into small ones.
                None if queued > SMALL_OUTPUT => match rent(&mut self.tx, env, env.large_block) {
                    Ok(tx) => tx,
                    Err(_) => rent(&mut self.tx, env, SMALL_BLOCK)?,
                },
                None => rent(&mut self.tx, env, SMALL_BLOCK)?,
            };
            // The sending key's record limit may come due between two records of one
            // output: its KeyUpdate goes first, then the records go on under the new key.
            if c.wants_control() {
                if tx.spare_capacity() < CONTROL_RECORD_LEN + MAX_OVERHEAD {
                    return Ok(());
                }
                if control_record(c, tx, env.counters).is_err() {
                    return Err(self.poison());
                }
                continue;
            }
            // TLS 1.2 has no KeyUpdate: at the limit the connection ends, with close_notify
            // (the limit keeps a record for it) once `tx` has room for it.
            if c.keys_exhausted() {
                if tx.spare_capacity() >= CONTROL_RECORD_LEN {
                    self.finish(env, CloseReason::Done);
                }
                return Ok(());
            }
            let start = c.plaintext_start();
            let overhead = c.sealed_len(0, 0);
            if tx.spare_capacity() <= overhead {
                return Ok(());
            }
            let room = (tx.spare_capacity() - overhead).min(MAX_PLAINTEXT_LEN);
            let out = tx.spare_mut();
            let mut len = 0;
            for s in slices {
                let take = s.len().min(room - len);
                out[start + len..start + len + take].copy_from_slice(&s[..take]);
                len += take;
                if len == room {
                    break;
                }
            }
            match c.seal_in_place(out, len, 0) {
                Ok(sealed) => tx.commit(sealed),
                Err(_) => return Err(self.poison()),
            }
            conn.sent(len);
            if len == queued && n < SEND_BLOCKS {
                // All the core had (a keep-alive response, a pipelined batch): asking again
                // would walk its queue to find it empty.
                return Ok(());
            }
        }
    }

    /// The block to read ciphertext into, with room for the whole of the record at its front
    /// where that is known.
    #[cold]
    #[inline(never)]
    pub(crate) fn read_buf<F: FreeList, S: Service>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<&mut PoolBuf, Want> {
        let rx = match self.rx.take() {
            None => env.cache.get(SMALL_BLOCK).map_err(|_| Want::Pool)?,
            Some(mut rx) => {
                let front = self.plain.map_or(0, |(left, trailer)| left + trailer);
                let record = bufslab_tls::record::record_len(&rx[front..])
                    .ok()
                    .flatten()
                    .unwrap_or(HEADER_LEN);
                let need = front + record + 1;
                if rx.len() + rx.spare_capacity() < need.min(rx.capacity())
                    || rx.spare_capacity() == 0
                {
                    rx.compact();
                }
                if rx.capacity() < need && rx.capacity() < env.large_block {
                    match env.cache.get(env.large_block) {
                        Ok(mut big) => {
                            big.put_slice(&rx);
                            rx = big;
                        }
                        Err(_) => {
                            self.rx = Some(rx);
                            return Err(Want::Pool);
                        }
                    }
                }
                if rx.spare_capacity() == 0 {
                    self.rx = Some(rx);
                    return Err(Want::Close(CloseReason::BadInput));
                }
                rx
            }
        };
        Ok(self.rx.insert(rx))
    }

    /// Takes a block the kernel filled: it becomes `rx` when that is empty, else is appended
    /// to it; returns what did not fit (see `Conn::receive_block`).
    #[cold]
    #[inline(never)]
    pub(crate) fn receive_block<F: FreeList, S: Service>(
        &mut self,
        env: &mut Env<'_, F, S>,
        mut buf: PoolBuf,
    ) -> Option<PoolBuf> {
        let Some(rx) = self.rx.as_mut() else {
            self.rx = Some(buf);
            return None;
        };
        if rx.is_empty() && self.plain.is_none() {
            *rx = buf;
            return None;
        }
        if rx.spare_capacity() < buf.len() {
            rx.compact();
        }
        if rx.spare_capacity() < buf.len() && rx.capacity() < env.large_block {
            if let Ok(mut big) = env.cache.get(env.large_block) {
                big.put_slice(rx);
                *rx = big;
            }
        }
        let take = buf.len().min(rx.spare_capacity());
        rx.put_slice(&buf[..take]);
        buf.advance(take);
        (!buf.is_empty()).then_some(buf)
    }

    /// `n` bytes were read into [`read_buf`](Self::read_buf)'s room.
    #[cold]
    #[inline(never)]
    pub(crate) fn received(&mut self, n: usize) {
        if let Some(rx) = self.rx.as_mut() {
            rx.commit(n.min(rx.spare_capacity()));
        }
    }

    /// The records to send, one block.
    #[cold]
    #[inline(never)]
    pub(crate) fn front(&self) -> &[u8] {
        self.tx.as_deref().unwrap_or_default()
    }

    /// `n` bytes of them were sent.
    #[cold]
    #[inline(never)]
    pub(crate) fn sent(&mut self, n: usize) {
        if let Some(tx) = self.tx.as_mut() {
            tx.advance(n.min(tx.len()));
            if tx.is_empty() {
                self.tx = None;
            }
        }
    }

    /// A `close_notify` for a connection the worker closes without asking the core (an idle
    /// one on shutdown), sealed into `out`; its length, or 0 when none is due.
    pub(crate) fn farewell(&mut self, out: &mut [u8]) -> usize {
        match &mut self.state {
            State::Open(c) if !c.sent_close() => c.write_close_notify(out).unwrap_or(0),
            _ => 0,
        }
    }
}

/// Writes `c`'s due control record into `tx`: a `KeyUpdate` (counted), or in TLS 1.2 the
/// `no_renegotiation` warning that refuses a renegotiation. An error poisons `c`'s sending
/// half.
fn control_record(
    c: &mut Connection,
    tx: &mut PoolBuf,
    counters: &WorkerCounters,
) -> Result<(), Error> {
    let n = c.write_control(tx.spare_mut())?;
    tx.commit(n);
    if c.version() == Version::Tls13 {
        WorkerCounters::add(&counters.tls_key_updates, 1);
    }
    Ok(())
}

/// Whether the next response is to be the connection's last: under TLS 1.2, which cannot
/// change keys, once the sending key has few records left. That response then says
/// `Connection: close` (as during a shutdown) and is the last, where sealing until the key is
/// spent would cut a response short, or leave a request read and never answered.
///
/// "Few": one call of the core queues at most `out_blocks` blocks of up to `large_block`
/// bytes, a record per 16 KiB and one more where a block ends: `turn` records. The call
/// before the one that reads the last head started with more than three turns left and took
/// at most one; the last head's call takes at most one more, and its response, a whole body
/// within the queue, at most a third: so no whole response is cut. A body streamed past that
/// (pulled, chunked, an upgrade's) still ends where the key does.
fn last_response_due(c: &Connection, out_blocks: usize, large_block: usize) -> bool {
    if c.version() != Version::Tls12 {
        return false;
    }
    let turn = out_blocks * (large_block / MAX_PLAINTEXT_LEN + 1) + 1;
    c.sealer().data_records_left() <= 3 * turn as u64
}

/// The block in `slot`, rented now (of `size` bytes) if there is none.
fn rent<'b, F: FreeList, S>(
    slot: &'b mut Option<PoolBuf>,
    env: &mut Env<'_, F, S>,
    size: usize,
) -> Result<&'b mut PoolBuf, Want> {
    if let Some(b) = slot {
        return Ok(b);
    }
    match env.cache.get(size) {
        Ok(b) => Ok(slot.insert(b)),
        Err(_) => Err(Want::Pool),
    }
}
