//! The state all workers and the server's handle share: the counters, the pool as the
//! statistics see it, the shutdown flag. Read-mostly, never on a lock.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::stats::{self, PoolView, ServerStats, WorkerCounters};

/// State shared by all workers and the handle: read-mostly, never on a lock.
pub(crate) struct Shared {
    pub(crate) counters: Box<[WorkerCounters]>,
    pub(crate) pool: Box<dyn PoolView>,
    pub(crate) shutdown: AtomicBool,
    pub(crate) alloc_counter: Option<fn() -> u64>,
    /// The driver the workers run: "epoll" or "uring".
    pub(crate) driver: &'static str,
}

impl Shared {
    /// A snapshot of the counters and the pool. Allocates nothing.
    pub(crate) fn snapshot(&self) -> ServerStats {
        let mut s = stats::snapshot(&self.counters, &*self.pool, self.alloc_counter);
        s.driver = self.driver;
        // Blocks waiting in the io_uring buffer rings belong to no connection: report them as
        // pooled, so `rented` means what the connections hold under either driver.
        let ring: u64 = self
            .counters
            .iter()
            .map(|c| c.ring_blocks.load(Ordering::Relaxed))
            .sum();
        let ring = (ring as usize).min(s.pool.rented_blocks);
        let bytes = (ring * crate::config::SMALL_BLOCK).min(s.pool.rented_bytes);
        s.pool.rented_blocks -= ring;
        s.pool.rented_bytes -= bytes;
        s.pool.pooled_bytes += bytes;
        // The rings are full nearly all the time, so their blocks were out at the peak too.
        s.pool.peak_out_bytes = s.pool.peak_out_bytes.saturating_sub(bytes);
        s
    }
}
