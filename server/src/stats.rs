//! Server counters: one cache-line-aligned block of relaxed atomics per worker, written only by
//! its worker (no contention, no false sharing) and summed by readers.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::Serialize;

use bufslab::{FreeList, Pool};

/// What the handle and the housekeeping need of the pool, whichever free list it uses; the
/// workers hold the typed pool.
pub(crate) trait PoolView: Send + Sync {
    fn stats(&self) -> bufslab::Stats;
    fn evict_idle(&self) -> usize;
}

impl<F: FreeList> PoolView for Pool<F> {
    fn stats(&self) -> bufslab::Stats {
        Pool::stats(self)
    }
    fn evict_idle(&self) -> usize {
        Pool::evict_idle(self)
    }
}

/// One worker's counters. Only the owning worker writes; anyone may read.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct WorkerCounters {
    pub(crate) requests: AtomicU64,
    pub(crate) accepted: AtomicU64,
    pub(crate) open: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) header_timeouts: AtomicU64,
    pub(crate) idle_timeouts: AtomicU64,
    pub(crate) bad_requests: AtomicU64,
    pub(crate) io_errors: AtomicU64,
    pub(crate) pool_waits: AtomicU64,
    pub(crate) accept_backoffs: AtomicU64,
    pub(crate) late_body_faults: AtomicU64,
    pub(crate) service_errors: AtomicU64,
    pub(crate) slow_bodies: AtomicU64,
    /// Blocks in the worker's io_uring buffer ring (rented from the pool, waiting for data).
    pub(crate) ring_blocks: AtomicU64,
    pub(crate) receive_pauses: AtomicU64,
    /// TLS handshakes in progress (a gauge).
    pub(crate) tls_handshakes: AtomicU64,
    pub(crate) tls_handshake_failures: AtomicU64,
    pub(crate) tls_accept_holds: AtomicU64,
    pub(crate) tls_key_updates: AtomicU64,
}

impl WorkerCounters {
    /// Adds to a counter. The owning worker is the only writer, so a relaxed load and store
    /// suffice: a `fetch_add` would be a locked read-modify-write (`lock xadd` on x86-64) on
    /// every request for nothing. Readers see each store whole.
    #[inline]
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed);
    }

    /// Subtracts from a counter; owner only, as [`add`](Self::add).
    #[inline]
    pub(crate) fn sub(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Relaxed).wrapping_sub(n), Relaxed);
    }
}

/// The pool's numbers as `/stats` and [`ServerStats`] report them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PoolStats {
    /// Blocks rented right now (held by connections as input or output).
    pub rented_blocks: usize,
    /// Bytes rented right now.
    pub rented_bytes: usize,
    /// Bytes of free blocks (shared free lists and local caches).
    pub pooled_bytes: usize,
    /// Bytes of block memory in live slabs.
    pub allocated_bytes: usize,
    /// Peak bytes out of the shared free lists.
    pub peak_out_bytes: usize,
    /// Live slabs.
    pub slabs: usize,
    /// Gets that found a free list empty.
    pub misses: u64,
    /// Slabs given back to the allocator.
    pub evicted_slabs: u64,
}

impl From<bufslab::Stats> for PoolStats {
    fn from(s: bufslab::Stats) -> Self {
        PoolStats {
            rented_blocks: s.rented_blocks,
            rented_bytes: s.rented_bytes,
            pooled_bytes: s.pooled_bytes,
            allocated_bytes: s.allocated_bytes,
            peak_out_bytes: s.peak_out_bytes,
            slabs: s.slabs,
            misses: s.misses,
            evicted_slabs: s.evicted_slabs,
        }
    }
}

/// A snapshot of the whole server: worker counters summed, plus the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ServerStats {
    /// Responses to complete requests (any status, including errors and timeouts answered).
    pub requests: u64,
    /// Connections open right now.
    pub connections_open: u64,
    /// Connections accepted since start.
    pub connections_accepted: u64,
    /// Connections closed at once because a worker was at `max_conns`.
    pub connections_rejected: u64,
    /// Connections closed because a request head did not arrive in time.
    pub header_timeouts: u64,
    /// Connections closed for lack of progress (idle keep-alive, stalled body or reader).
    pub idle_timeouts: u64,
    /// Requests answered with a 4xx/5xx framing error (then closed).
    pub bad_requests: u64,
    /// Connections ended by an I/O error (reset by peer, broken pipe).
    pub io_errors: u64,
    /// Times a connection had to wait for the pool to give blocks back.
    pub pool_waits: u64,
    /// Times accepting paused because the process ran out of file descriptors.
    pub accept_backoffs: u64,
    /// Request bodies found malformed (or over `max_body`) after their response had started
    /// going out: the connection was closed, the only signal left. (Before that, the request
    /// is answered 400 or 413 instead, and counted in `bad_requests`.)
    pub late_body_faults: u64,
    /// Responses a service misused its `Exchange` for or left unfinished: a 500 (503 when
    /// the pool ran dry) was sent in their place, or the connection closed once some of the
    /// response had gone out.
    pub service_errors: u64,
    /// Request bodies that came slower than `Config::min_body_rate`: answered 408 (or the
    /// connection closed, once the response had started going out).
    pub slow_bodies: u64,
    /// Times the io_uring driver stopped receiving on a connection because its input came
    /// faster than the connection took it (the multishot receive cancelled, then armed again
    /// once the input was taken: the peer meets TCP's flow control). Always 0 under epoll,
    /// which just reads no further.
    pub receive_pauses: u64,
    /// TLS handshakes in progress right now.
    pub tls_handshakes: u64,
    /// TLS handshakes that failed: the client's alert, or ours (no common version or suite,
    /// a bad record), or a connection that closed before its handshake finished (the peer
    /// closed or reset it, or the handshake's deadline passed).
    pub tls_handshake_failures: u64,
    /// Times a worker reached [`TlsConfig::max_handshakes`](crate::TlsConfig::max_handshakes)
    /// and stopped accepting on its HTTPS listeners until a handshake ended: connections that
    /// arrived meanwhile waited in the listen backlog.
    pub tls_accept_holds: u64,
    /// `KeyUpdate`s the server sent: asked for by a client, or due at the sending key's record
    /// limit ([`TlsConfig::record_limit`](crate::TlsConfig::record_limit)).
    pub tls_key_updates: u64,
    /// What moves the bytes for the connection core: `epoll`.
    pub driver: &'static str,
    /// The pool.
    pub pool: PoolStats,
    /// Heap allocations since start, when an allocation counter is configured (`dhat-heap`).
    pub allocations: Option<u64>,
    /// `allocations / requests`, when an allocation counter is configured.
    pub allocations_per_request: Option<f64>,
}

/// Sums the workers' counters and reads the pool.
pub(crate) fn snapshot(
    workers: &[WorkerCounters],
    pool: &dyn PoolView,
    alloc_counter: Option<fn() -> u64>,
) -> ServerStats {
    let mut s = ServerStats::default();
    for w in workers {
        s.requests += w.requests.load(Relaxed);
        s.connections_open += w.open.load(Relaxed);
        s.connections_accepted += w.accepted.load(Relaxed);
        s.connections_rejected += w.rejected.load(Relaxed);
        s.header_timeouts += w.header_timeouts.load(Relaxed);
        s.idle_timeouts += w.idle_timeouts.load(Relaxed);
        s.bad_requests += w.bad_requests.load(Relaxed);
        s.io_errors += w.io_errors.load(Relaxed);
        s.pool_waits += w.pool_waits.load(Relaxed);
        s.accept_backoffs += w.accept_backoffs.load(Relaxed);
        s.late_body_faults += w.late_body_faults.load(Relaxed);
        s.service_errors += w.service_errors.load(Relaxed);
        s.slow_bodies += w.slow_bodies.load(Relaxed);
        s.receive_pauses += w.receive_pauses.load(Relaxed);
        s.tls_handshakes += w.tls_handshakes.load(Relaxed);
        s.tls_handshake_failures += w.tls_handshake_failures.load(Relaxed);
        s.tls_accept_holds += w.tls_accept_holds.load(Relaxed);
        s.tls_key_updates += w.tls_key_updates.load(Relaxed);
    }
    s.driver = "epoll";
    s.pool = pool.stats().into();
    if let Some(count) = alloc_counter {
        let a = count();
        s.allocations = Some(a);
        s.allocations_per_request = Some(a as f64 / s.requests.max(1) as f64);
    }
    s
}
