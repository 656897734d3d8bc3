//! Closing a connection under io_uring: its socket goes to the kernel at once (a cancel of each
//! request in flight, then the close, with no system call of their own), its blocks come back
//! once the kernel no longer uses them.

use super::*;

impl<F: FreeList, S: Service> UringWorker<F, S> {
    /// Closes a connection: its socket now (which ends a receive in flight), its blocks now or,
    /// with a send in flight, at that send's completion.
    pub(super) fn close(&mut self, slot: usize, reason: CloseReason) {
        self.base.detach(slot);
        let Some(uc) = self.conns.get_mut(slot) else {
            return;
        };
        let Some(sock) = uc.io.sock.take() else {
            return;
        };
        if !uc.io.sending {
            // A sound TLS connection closed without a word from its core says `close_notify`,
            // if the socket takes it at once (a system call: this is not the request path).
            let mut alert = [0u8; bufslab_tls::record::ALERT_RECORD_LEN];
            let n = uc.conn.farewell(&mut alert);
            if n > 0 {
                let _ = rustix::net::send(
                    &sock,
                    &alert[..n],
                    rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL,
                );
            }
        }
        let in_flight = [
            uc.io.recv_armed.then(|| user_data(RECV, uc.io.gen, slot)),
            uc.io.recv_own.then(|| user_data(RECV_OWN, uc.io.gen, slot)),
            uc.io.sending.then(|| user_data(SEND, uc.io.gen, slot)),
        ];
        self.close_socket(sock, in_flight);
        self.closed(slot, reason);
    }

    /// A connection's socket went to the kernel to close: its slot forgets it (completions of
    /// its requests are stale from here on), and its blocks go home now or, with a send in
    /// flight, at that send's completion.
    pub(super) fn closed(&mut self, slot: usize, reason: CloseReason) {
        let uc = &mut self.conns[slot];
        uc.io.gen = uc.io.gen.wrapping_add(1) & 0xff_ffff;
        uc.io.recv_armed = false;
        uc.io.recv_cancel = false;
        if uc.io.pending.take().is_some() {
            self.base.gave_back();
        }
        if uc.io.parked > 0 {
            uc.io.parked = 0;
            self.parked.retain(|(s, _)| *s as usize != slot);
            self.base.gave_back();
        }
        uc.io.expire_pending = None;
        uc.io.closing = true;
        self.ring_waiters.remove(slot);
        if !uc.busy() {
            self.finish_close(slot);
        }
        self.base.count_close(reason);
    }

    /// Closes a socket with requests, no system call: a cancel of each request still in flight
    /// on it (`in_flight`, their user data), then the close. A request parked in the kernel
    /// holds the socket open past a close of its descriptor; the cancel completes it, stale,
    /// with its block. Both run inline at submission (a shutdown request would go to an io-wq
    /// worker thread). Where the submission queue has no room even after a submit, a shutdown
    /// and a close system call do the same.
    pub(super) fn close_socket(&mut self, sock: TcpStream, in_flight: [Option<u64>; 3]) {
        if !make_room(&mut self.ring, 1 + in_flight.iter().flatten().count()) {
            let _ = sock.shutdown(Shutdown::Both);
            return; // `sock` closes as it drops
        }
        let fd = types::Fd(sock.into_raw_fd());
        let mut sq = self.ring.submission();
        for target in in_flight.into_iter().flatten() {
            // SAFETY: the request names no memory. There is room for it.
            let pushed = unsafe { sq.push(&cancel_request(target)) }.is_ok();
            debug_assert!(pushed);
        }
        // SAFETY: the request names no memory; the descriptor is the kernel's to close from
        // here on (`into_raw_fd` gave up ownership). There is room for it.
        let pushed = unsafe { sq.push(&close_request(fd)) }.is_ok();
        debug_assert!(pushed);
        drop(sq);
        self.closes_in_flight += 1;
    }

    /// Releases a closed connection's blocks and frees its slot, once the kernel no longer
    /// uses them.
    pub(super) fn finish_close(&mut self, slot: usize) {
        let counters = &self.base.shared.counters[self.base.id];
        if self
            .conns
            .get_mut(slot)
            .is_some_and(|uc| uc.finish_close(counters))
        {
            self.conns[slot].conn.ended(&mut self.base.service);
            self.base.free.push(slot as u32);
            self.base.holds(slot, 0);
        }
    }

    /// The completion of a request that used the connection's blocks, `in_flight` its flag:
    /// the connection, where it is open; a closed one's close finishes here.
    #[inline]
    pub(super) fn blocks_back(
        &mut self,
        slot: usize,
        in_flight: fn(&mut UConn<S::State>) -> &mut bool,
    ) -> Option<&mut UConn<S::State>> {
        let uc = self.conns.get_mut(slot)?;
        *in_flight(uc) = false;
        if uc.io.closing {
            self.finish_close(slot);
            return None;
        }
        self.conns.get_mut(slot)
    }
}
