//! Responses answered later, from any thread: the [`Deferred`] token a service takes for a
//! request, and the [`Mailbox`] through which another thread hands the answer back to the
//! worker that owns the connection.
//!
//! The answer is the service's own per-request [`State`](crate::Service::State), filled in
//! elsewhere (a thread pool's result, a backend's reply). It travels through a bounded
//! lock-free queue (`crossbeam_queue::ArrayQueue`, one per worker, sized at start-up for one
//! answer per connection slot), and the worker is woken once per batch of answers: through its
//! `mio::Waker` under epoll, through an eventfd its ring polls under io_uring. Nothing is
//! allocated per answer.
//!
//! The worker takes each answer on its own thread, puts it in the connection's state and calls
//! [`Service::resume`](crate::Service::resume), which writes the response. An answer for a
//! connection that has closed since, or for an exchange it no longer waits for, is dropped
//! there: the token's generation names one exchange of one connection slot, never a later one.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

/// Names one deferred exchange: a connection slot of one worker, and which exchange of it.
/// `Copy` and `Send`: hand it to whatever thread will answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deferred {
    pub(crate) slot: u32,
    pub(crate) gen: u32,
}

/// How a worker is woken when answers arrive.
pub(crate) enum Wake {
    /// The epoll worker's `mio::Waker`.
    Mio(Arc<mio::Waker>),
    /// An eventfd the io_uring worker keeps a poll armed on.
    EventFd(OwnedFd),
}

impl Wake {
    fn wake(&self) -> io::Result<()> {
        match self {
            Wake::Mio(w) => w.wake(),
            Wake::EventFd(fd) => {
                let one = 1u64.to_ne_bytes();
                rustix::io::write(fd, &one)
                    .map(drop)
                    .map_err(io::Error::from)
            }
        }
    }
}

struct Inner<T> {
    answers: ArrayQueue<(Deferred, T)>,
    /// A wake-up is on its way and the worker has not drained since: later answers need not
    /// wake it again.
    woken: AtomicBool,
    wake: Wake,
}

/// Where answers to deferred exchanges go: one per worker, cloned into whatever threads answer
/// (a clone is a reference count, not an allocation). Get it from
/// [`WorkerInfo::mailbox`](crate::WorkerInfo::mailbox) when the worker makes its service.
pub struct Mailbox<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for Mailbox<T> {
    fn clone(&self) -> Self {
        Mailbox {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Mailbox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mailbox")
            .field("queued", &self.inner.answers.len())
            .field("capacity", &self.inner.answers.capacity())
            .finish()
    }
}

impl<T> Mailbox<T> {
    /// A mailbox holding up to `capacity` answers, waking its worker with `wake`.
    pub(crate) fn new(capacity: usize, wake: Wake) -> Mailbox<T> {
        Mailbox {
            inner: Arc::new(Inner {
                answers: ArrayQueue::new(capacity.max(1)),
                woken: AtomicBool::new(false),
                wake,
            }),
        }
    }

    /// Hands `answer` to the worker for the exchange `to`, and wakes the worker. Call from any
    /// thread; never blocks, never allocates.
    ///
    /// # Errors
    /// Gives `answer` back when the mailbox is full: more answers are waiting than the worker
    /// has connection slots, so some exchange was answered twice.
    pub fn answer(&self, to: Deferred, answer: T) -> Result<(), T> {
        self.inner.answers.push((to, answer)).map_err(|(_, a)| a)?;
        if !self.inner.woken.swap(true, Ordering::AcqRel) {
            // A failed wake (the worker is gone) leaves the answer to be dropped with the
            // mailbox; nothing else can be done from here.
            let _ = self.inner.wake.wake();
        }
        Ok(())
    }

    /// Wakes the upgraded connection `to` names ([`Upgraded::token`](crate::Upgraded::token)):
    /// its service gets [`UpgradeEvent::Wake`](crate::UpgradeEvent::Wake) once the
    /// connection's output is sent. Call from any thread, the worker's own included; never
    /// blocks, never allocates. Wake-ups that find the connection woken already make one
    /// event, but each takes a place in the mailbox until the worker drains it, so wake a
    /// connection again only after its `Wake` came (keep a flag).
    ///
    /// # Errors
    /// Gives the default answer it would have sent back when the mailbox is full.
    pub fn wake(&self, to: Deferred) -> Result<(), T>
    where
        T: Default,
    {
        self.answer(to, T::default())
    }

    /// Takes the next waiting answer (the worker's side).
    pub(crate) fn take(&self) -> Option<(Deferred, T)> {
        self.inner.answers.pop()
    }

    /// The worker is about to drain: answers from here on wake it again.
    pub(crate) fn draining(&self) {
        self.inner.woken.store(false, Ordering::Release);
    }

    /// The eventfd the io_uring worker polls, if this mailbox wakes through one.
    pub(crate) fn event_fd(&self) -> Option<BorrowedFd<'_>> {
        match &self.inner.wake {
            Wake::EventFd(fd) => Some(fd.as_fd()),
            Wake::Mio(_) => None,
        }
    }
}
