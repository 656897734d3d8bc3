//! The requests the worker queues on its ring, built in place: the multishot receive, the send
//! (or `writev`), the last send linked to its close, the receive into a read block, cancels
//! and closes. Each that names memory says, where it is queued, why the memory outlives it.

use super::*;
use crate::link::Wire;

/// Arms the multishot receive of the connection in `slot`: the kernel takes a block from the
/// buffer ring each time data arrives, until the receive ends (end of stream, an error, a dry
/// ring, a cancel).
#[inline(always)]
pub(super) fn arm_ring_recv(
    ring: &mut IoUring,
    uio: &mut UIo,
    fd: types::Fd,
    slot: usize,
) -> io::Result<()> {
    let sqe = opcode::RecvMulti::new(fd, GROUP)
        .build()
        .user_data(user_data(RECV, uio.gen, slot));
    // SAFETY: a receive with buffer select names no memory of the connection, only the buffer
    // group, which the worker's `BufRing` keeps registered until every receive has completed.
    unsafe { queue(ring, &sqe)? };
    uio.recv_armed = true;
    Ok(())
}

/// Queues the connection's last response and the close of its socket in one submission, where
/// the core closes as soon as it is sent (no lingering close), it is one block, and no input
/// waits: a cancel of the armed receive, then the send with `MSG_WAITALL` (the kernel resumes a
/// short send itself; a failure fails it), hard-linked to the close, which thus runs after the
/// send whatever its result. The socket is the kernel's from here on. Returns whether it did;
/// otherwise nothing is queued.
#[inline(always)]
pub(super) fn queue_last_send<T: Default>(
    ring: &mut IoUring,
    uio: &mut UIo,
    conn: &impl Wire<T>,
    slot: usize,
) -> io::Result<bool> {
    let last = conn.closes_after_output()
        && conn.output_blocks() == 1
        && uio.pending.is_none()
        && uio.parked == 0;
    if !last {
        return Ok(false);
    }
    // The three go into one submission: a link must not be split by a submit in between.
    if !make_room(ring, 3) {
        return Ok(false);
    }
    let Some(sock) = uio.sock.take() else {
        return Ok(false);
    };
    let fd = types::Fd(sock.into_raw_fd());
    let mut sq = ring.submission();
    if uio.recv_armed && !uio.recv_cancel {
        let cancel = cancel_request(user_data(RECV, uio.gen, slot));
        // SAFETY: the request names no memory. There is room for it.
        let pushed = unsafe { sq.push(&cancel) }.is_ok();
        debug_assert!(pushed);
    }
    let front = conn.front();
    let send = opcode::Send::new(fd, front.as_ptr(), front.len() as u32)
        .flags(libc::MSG_WAITALL)
        .build()
        .flags(squeue::Flags::IO_HARDLINK)
        .user_data(user_data(SEND, uio.gen, slot));
    let close = close_request(fd);
    // SAFETY: the send names the connection's only output block, which it keeps until the
    // send's completion (the slot is `closing` and `sending` until then; see `run_conn`); the
    // close names no memory, and the descriptor is the kernel's to close (`into_raw_fd` gave
    // it up). There is room for both.
    let pushed = unsafe { sq.push(&send).is_ok() && sq.push(&close).is_ok() };
    debug_assert!(pushed);
    uio.sending = true;
    Ok(true)
}

/// Moves the oldest parked block of the connection in `slot` to its `pending`, if it has none.
#[inline(always)]
pub(super) fn unpark(parked: &mut VecDeque<(u32, PoolBuf)>, uio: &mut UIo, slot: usize) {
    if uio.parked == 0 || uio.pending.is_some() {
        return;
    }
    if let Some(i) = parked.iter().position(|(s, _)| *s as usize == slot) {
        uio.pending = parked.remove(i).map(|(_, buf)| buf);
        uio.parked -= 1;
    }
}

/// Where [`file`] put a received block.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Filed {
    /// It is the connection's `pending` block.
    Pending,
    /// Its bytes were appended to `pending`: the block itself is free.
    Copied,
    /// It waits in `parked`, behind the connection's older input.
    Parked,
}

/// Files `buf`, received for the connection in `slot`, behind its unread input: as `pending`
/// when there is none, else appended to `pending` where it fits (a copy, but only of input
/// that came while the core was busy), else parked. While any of the connection's blocks is
/// parked it goes behind them, even with `pending` empty (the core took it, and stopped before
/// the turn moved the next parked block up): the core takes `pending` before the parked
/// blocks, so a block put there would overtake older input.
#[inline(always)]
pub(super) fn file(
    parked: &mut VecDeque<(u32, PoolBuf)>,
    uio: &mut UIo,
    slot: usize,
    buf: PoolBuf,
) -> Filed {
    if uio.parked == 0 {
        match uio.pending.as_mut() {
            None => {
                uio.pending = Some(buf);
                return Filed::Pending;
            }
            Some(pending) if pending.spare_capacity() >= buf.len() => {
                pending.put_slice(&buf);
                return Filed::Copied;
            }
            Some(_) => {}
        }
    }
    parked.push_back((slot as u32, buf));
    uio.parked += 1;
    Filed::Parked
}

/// Queues a request on `ring`, submitting first if the submission queue is full.
///
/// # Safety
/// Whatever memory `sqe` names stays valid until its completion.
pub(super) unsafe fn queue(ring: &mut IoUring, sqe: &squeue::Entry) -> io::Result<()> {
    loop {
        // SAFETY: the caller's contract.
        if unsafe { ring.submission().push(sqe) }.is_ok() {
            return Ok(());
        }
        ring.submit()?;
    }
}

/// Whether the submission queue has room for `need` more entries, submitting what it holds
/// first if it has not.
pub(super) fn make_room(ring: &mut IoUring, need: usize) -> bool {
    let free = |ring: &mut IoUring| {
        let sq = ring.submission();
        sq.capacity() - sq.len()
    };
    free(ring) >= need || (ring.submit().is_ok() && free(ring) >= need)
}

/// A cancel of the request whose user data is `target`.
pub(super) fn cancel_request(target: u64) -> squeue::Entry {
    opcode::AsyncCancel::new(target)
        .build()
        .user_data(user_data(CANCEL, 0, 0))
}

/// The close of a socket the kernel now owns.
pub(super) fn close_request(fd: types::Fd) -> squeue::Entry {
    opcode::Close::new(fd)
        .build()
        .user_data(user_data(CLOSE, 0, 0))
}

/// A receive into `space`, the spare bytes of the connection's read block.
pub(super) fn own_recv_request(fd: types::Fd, space: &mut [u8], user_data: u64) -> squeue::Entry {
    let len = u32::try_from(space.len()).unwrap_or(u32::MAX);
    opcode::Recv::new(fd, space.as_mut_ptr(), len)
        .build()
        .user_data(user_data)
}

/// One `send` of the only output block, else one `writev` of them all (the iovecs kept in the
/// slot).
#[inline(always)]
pub(super) fn send_request<T: Default>(
    uio: &mut UIo,
    conn: &impl Wire<T>,
    fd: types::Fd,
    user_data: u64,
) -> squeue::Entry {
    let sqe = if conn.output_blocks() == 1 {
        let front = conn.front();
        opcode::Send::new(fd, front.as_ptr(), front.len() as u32).build()
    } else {
        let empty: &[u8] = &[];
        let mut slices = [io::IoSlice::new(empty); SEND_BLOCKS];
        let n = conn.output(&mut slices);
        for (iov, s) in uio.iov.iter_mut().zip(&slices[..n]) {
            iov.iov_base = s.as_ptr() as *mut libc::c_void;
            iov.iov_len = s.len();
        }
        opcode::Writev::new(fd, uio.iov.as_ptr(), n as u32).build()
    };
    sqe.user_data(user_data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes the connection's turns hand the core from here: `pending`, then each parked
    /// block as `unpark` moves it up.
    fn take_all(parked: &mut VecDeque<(u32, PoolBuf)>, uio: &mut UIo, slot: usize) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            unpark(parked, uio, slot);
            match uio.pending.take() {
                Some(buf) => out.extend_from_slice(&buf),
                None => return out,
            }
        }
    }

    #[test]
    fn a_block_received_while_older_ones_are_parked_goes_behind_them() {
        let pool = bufslab::Pool::new();
        let block = |byte: u8, len: Option<usize>| {
            let mut b = pool.get(SMALL_BLOCK).unwrap();
            let len = len.unwrap_or(b.spare_capacity());
            b.put_slice(&vec![byte; len]);
            b
        };
        let (mut parked, mut uio, slot) = (VecDeque::new(), UIo::new(), 3);
        // Another connection's parked block, which must stay where it is.
        parked.push_back((7, block(9, Some(10))));
        // The core is busy: the first block waits as `pending` (full), the next is parked.
        let first = block(1, None);
        let first_len = first.len();
        assert_eq!(file(&mut parked, &mut uio, slot, first), Filed::Pending);
        assert_eq!(
            file(&mut parked, &mut uio, slot, block(2, Some(100))),
            Filed::Parked
        );
        // A turn hands the core `pending`, and the core stops (a response to send) before the
        // turn moves the parked block up: `pending` is empty, one block parked.
        let taken = uio.pending.take().unwrap();
        assert_eq!(uio.parked, 1);
        // Blocks the kernel posted before the cancel took effect come now: behind the parked
        // one, never ahead of it.
        assert_eq!(
            file(&mut parked, &mut uio, slot, block(3, Some(200))),
            Filed::Parked
        );
        assert_eq!(
            file(&mut parked, &mut uio, slot, block(4, Some(50))),
            Filed::Parked
        );
        let mut got = taken.to_vec();
        got.extend(take_all(&mut parked, &mut uio, slot));
        let mut want = vec![1; first_len];
        for (byte, len) in [(2, 100), (3, 200), (4, 50)] {
            want.extend(std::iter::repeat(byte).take(len));
        }
        assert!(got == want, "the connection's input was reordered");
        assert_eq!(uio.parked, 0);
        assert_eq!(parked.len(), 1);
        assert_eq!(parked[0].0, 7);
    }

    #[test]
    fn a_block_is_copied_behind_pending_only_when_nothing_is_parked() {
        let pool = bufslab::Pool::new();
        let block = |byte: u8, len: usize| {
            let mut b = pool.get(SMALL_BLOCK).unwrap();
            b.put_slice(&vec![byte; len]);
            b
        };
        let (mut parked, mut uio, slot) = (VecDeque::new(), UIo::new(), 0);
        assert_eq!(
            file(&mut parked, &mut uio, slot, block(1, 10)),
            Filed::Pending
        );
        assert_eq!(
            file(&mut parked, &mut uio, slot, block(2, 10)),
            Filed::Copied
        );
        assert_eq!(
            file(&mut parked, &mut uio, slot, block(3, SMALL_BLOCK)),
            Filed::Parked
        );
        // It would fit behind `pending`, but an older block is parked.
        assert_eq!(
            file(&mut parked, &mut uio, slot, block(4, 10)),
            Filed::Parked
        );
        let got = take_all(&mut parked, &mut uio, slot);
        let mut want = vec![1; 10];
        want.extend([2; 10]);
        want.extend([3; SMALL_BLOCK]);
        want.extend([4; 10]);
        assert!(got == want, "the connection's input was reordered");
    }
}
