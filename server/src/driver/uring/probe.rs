//! Setting up a worker's ring, and finding out at start-up whether this kernel and its
//! sandbox let io_uring run at all (`probe`), so that `IoMode::Auto` can fall back to epoll
//! with the reason.

use io_uring::{cqueue, opcode, IoUring};

use super::*;

/// Sets up a ring the way a worker does: `SINGLE_ISSUER | DEFER_TASKRUN`, else
/// `COOP_TASKRUN`, else plain.
pub(super) fn new_ring() -> Result<IoUring, UringError> {
    let mut last = None;
    for flags in 0..3 {
        let mut b = IoUring::builder();
        b.setup_cqsize(SQ_ENTRIES * 4).setup_submit_all();
        match flags {
            0 => {
                b.setup_single_issuer().setup_defer_taskrun();
            }
            1 => {
                b.setup_coop_taskrun();
            }
            _ => {}
        }
        match b.build(SQ_ENTRIES) {
            Ok(ring) => return Ok(ring),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(UringError::classify(e)),
        }
    }
    Err(UringError::classify(last.unwrap_or_else(|| {
        io::Error::from_raw_os_error(libc::EINVAL)
    })))
}

/// Whether this process can run the io_uring driver: a ring with the worker's flags, a
/// provided buffer ring (Linux 5.19), a timed wait (`IORING_FEAT_EXT_ARG`, 5.11), the opcodes,
/// and a multishot receive that works (6.0).
///
/// The rings are made on a thread of their own: a thread that once had a ring gets the
/// kernel's io_uring task context, whose teardown can interrupt that thread's next blocking
/// socket call (`EINTR` where a receive timeout is set), and the caller's thread is someone
/// else's.
pub(crate) fn probe() -> Result<(), UringError> {
    std::thread::Builder::new()
        .name("bufslab-uring-probe".into())
        .spawn(probe_here)
        .map_err(UringError::Io)?
        .join()
        .unwrap_or_else(|_| {
            Err(UringError::Io(io::Error::other(
                "the io_uring probe panicked",
            )))
        })
}

pub(super) fn probe_here() -> Result<(), UringError> {
    Features::probe()?;
    let ring = new_ring()?;
    if !ring.params().is_feature_ext_arg() {
        return Err(UringError::Invalid);
    }
    let mut probe = io_uring::Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(UringError::classify)?;
    let ops = [
        opcode::Recv::CODE,
        opcode::Send::CODE,
        opcode::Writev::CODE,
        opcode::AcceptMulti::CODE,
        opcode::AsyncCancel::CODE,
        opcode::Close::CODE,
    ];
    if !ops.iter().all(|&op| probe.is_supported(op)) {
        return Err(UringError::Invalid);
    }
    probe_multishot_recv(ring)
}

/// Whether a multishot receive with buffer select works here (Linux 6.0; the opcode probe
/// cannot tell): one is armed on a socket pair over a two-block buffer ring and fed a byte,
/// which must come back in a completion that keeps the receive armed. Then it is cancelled
/// and drained to its final completion, so the buffer ring can be released.
pub(super) fn probe_multishot_recv(mut ring: IoUring) -> Result<(), UringError> {
    use bufslab::ClassConfig;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    let pool = Pool::builder()
        .class(
            ClassConfig::new(64)
                .blocks_per_slab(4)
                .prealloc_slabs(1)
                .max_slabs(1),
        )
        .build()
        .map_err(|e| UringError::Io(io::Error::other(e.to_string())))?;
    let cache = pool.local_cache();
    let mut bufs = BufRing::new(&ring, &cache, GROUP, 2, 64)?;
    bufs.refill();
    let (rx, mut tx) = UnixStream::pair().map_err(UringError::Io)?;
    let recv = opcode::RecvMulti::new(types::Fd(rx.as_raw_fd()), GROUP)
        .build()
        .user_data(1);
    let cancel = opcode::AsyncCancel::new(1).build().user_data(2);
    // SAFETY: the receive names only the buffer group, registered until `release` below,
    // which runs only after the receive's final completion; the cancel names no memory.
    unsafe { queue(&mut ring, &recv).map_err(UringError::Io)? };
    tx.write_all(b"x").map_err(UringError::Io)?;
    let mut works = false;
    let mut cancelled = false;
    loop {
        ring.submit_and_wait(1).map_err(UringError::classify)?;
        let mut done = false;
        for cqe in ring.completion() {
            if cqe.user_data() != 1 {
                continue;
            }
            // SAFETY: a completion of this ring's receive on the group, taken once.
            drop(unsafe { bufs.take(&cqe) });
            works |= cqe.result() == 1 && cqueue::more(cqe.flags());
            done |= !cqueue::more(cqe.flags());
        }
        if done {
            break;
        }
        if !cancelled {
            cancelled = true;
            // SAFETY: see above.
            unsafe { queue(&mut ring, &cancel).map_err(UringError::Io)? };
        }
    }
    // SAFETY: the receive reached its final completion; nothing else selects from the group.
    unsafe { bufs.release() };
    if works {
        Ok(())
    } else {
        Err(UringError::Invalid)
    }
}
