//! The worker's completions: what each finished request means for its connection.

use super::*;

impl<F: FreeList, S: Service> UringWorker<F, S> {
    /// Handles one completion.
    pub(super) fn complete(&mut self, cqe: &cqueue::Entry, now: Instant) -> io::Result<()> {
        let (kind, gen, slot) = split(cqe.user_data());
        let res = cqe.result();
        match kind {
            WAKE => {
                if !cqueue::more(cqe.flags()) {
                    self.wake_armed = false;
                }
                if let Some(fd) = self.base.mailbox.event_fd() {
                    // Reset the counter: a failed read only means it was already reset.
                    let mut count = [0u8; 8];
                    let _ = rustix::io::read(fd, &mut count);
                }
                deliver_answers(self, now)?;
            }
            ACCEPT => {
                // `slot` is the listener's index.
                if !cqueue::more(cqe.flags()) {
                    self.accept_armed &= !(1 << slot);
                    if self.base.shutting_down() {
                        self.listeners[slot] = None;
                    }
                }
                if res >= 0 {
                    // SAFETY: a successful accept's result is a new descriptor that nothing
                    // else owns.
                    let sock = unsafe { TcpStream::from_raw_fd(res) };
                    self.open(sock, slot, now)?;
                } else if matches!(
                    -res,
                    libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM
                ) {
                    self.base.accept_backoff(now);
                }
            }
            RECV => {
                let last = !cqueue::more(cqe.flags());
                if last {
                    self.recvs_in_flight -= 1;
                }
                // SAFETY: read from this ring's completion queue, for a multishot receive on
                // the buffer ring's group (every RECV is one; each of its completions carries
                // at most one block), and taken once here.
                let buf = unsafe { self.bufs.take(cqe) };
                let open = self
                    .conns
                    .get(slot)
                    .is_some_and(|uc| uc.io.gen == gen && uc.io.sock.is_some());
                if !open {
                    // A closed connection's receive: the block goes home.
                    if buf.is_some() {
                        self.base.gave_back();
                    }
                    return Ok(());
                }
                let uc = &mut self.conns[slot];
                if last {
                    uc.io.recv_armed = false;
                    uc.io.recv_cancel = false;
                }
                if res == -libc::ENOBUFS {
                    return self.ring_ran_dry(slot, now);
                }
                match (uc.received(res), buf) {
                    (Some(_), Some(buf)) => self.file_block(slot, buf)?,
                    // The end of stream's block comes back empty, and goes home.
                    (None, Some(_)) => self.base.gave_back(),
                    _ => {}
                }
                self.run_conn(slot, now, res > 0)?;
            }
            RECV_OWN => {
                self.recvs_in_flight -= 1;
                let Some(uc) = self.blocks_back(slot, |uc| &mut uc.io.recv_own) else {
                    return Ok(());
                };
                if let Some(n) = uc.received(res) {
                    uc.conn.received(n);
                }
                match uc.io.expire_pending.take() {
                    Some(kind) => self.expire_conn(slot, kind, now)?,
                    None => self.run_conn(slot, now, res > 0)?,
                }
            }
            SEND => {
                self.sends_in_flight -= 1;
                let shutting_down = self.base.shutting_down();
                let Some(uc) = self.blocks_back(slot, |uc| &mut uc.io.sending) else {
                    return Ok(());
                };
                match res {
                    n if n > 0 => {
                        uc.conn.sent(n as usize);
                        if uc.io.recv_armed
                            && uc.io.pending.is_none()
                            && uc.io.parked == 0
                            && uc.conn.is_idle()
                            && !shutting_down
                        {
                            // The whole response went and the next receive is already in
                            // flight: nothing for the core to do (its idle deadline was
                            // refreshed when the request came).
                            uc.conn.release_read_block();
                            let blocks = uc.blocks();
                            self.base.holds(slot, blocks);
                            return Ok(());
                        }
                        self.run_conn(slot, now, true)?;
                    }
                    e if e == -libc::EINTR || e == -libc::EAGAIN => {
                        self.run_conn(slot, now, false)?
                    }
                    _ => self.close(slot, CloseReason::Io),
                }
            }
            CLOSE => self.closes_in_flight -= 1,
            _ => {} // CANCEL, and the shutdowns
        }
        Ok(())
    }

    /// Files a block received for the open connection in `slot` behind its unread input (see
    /// [`file`]); when it is parked, the multishot receive is cancelled: the connection reads
    /// no further until the core has taken its input, as the epoll driver stops reading (the
    /// peer meets TCP's flow control). Blocks the kernel posted before the cancel took effect
    /// are parked too.
    pub(super) fn file_block(&mut self, slot: usize, buf: PoolBuf) -> io::Result<()> {
        let Some(uc) = self.conns.get_mut(slot) else {
            return Ok(());
        };
        // The ring is refilled only to `entries - parked.len()`, and `buf` came from it: there
        // is room to park.
        debug_assert!(self.parked.len() < self.bufs.entries());
        match file(&mut self.parked, &mut uc.io, slot, buf) {
            Filed::Pending => return Ok(()),
            Filed::Copied => {
                // The block goes home.
                self.base.gave_back();
                return Ok(());
            }
            Filed::Parked => {}
        }
        if uc.io.recv_armed && !uc.io.recv_cancel {
            uc.io.recv_cancel = true;
            WorkerCounters::add(&self.base.counters().receive_pauses, 1);
            let sqe = cancel_request(user_data(RECV, uc.io.gen, slot));
            // SAFETY: the request names no memory.
            unsafe { self.push(&sqe)? };
        }
        Ok(())
    }
}
