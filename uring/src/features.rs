//! [`Features`]: what this kernel's io_uring offers a buffer ring, asked of the kernel.

use io_uring::IoUring;

use crate::buf_ring::probe_registration;
use crate::error::Error;

/// What io_uring offers here, probed from a small throwaway ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Features {
    /// Receive bundles (`IORING_FEAT_RECVSEND_BUNDLE`, Linux 6.10).
    pub recv_bundles: bool,
}

impl Features {
    /// Sets up an 8-entry ring and registers (then unregisters) a one-entry provided buffer ring
    /// on it: `Ok` means a [`BufRing`](crate::BufRing) can work here.
    ///
    /// The calling thread gets the kernel's io_uring task context, whose teardown after the
    /// ring closes can interrupt that thread's next blocking socket call (`EINTR` where a
    /// receive timeout is set). Probe from a thread of its own when the caller's thread does
    /// blocking I/O afterwards.
    ///
    /// # Errors
    ///
    /// Why io_uring or provided buffer rings are refused (see [`Error::is_refused`]):
    /// [`Error::Invalid`] on kernels before 5.19, which have io_uring but no buffer rings.
    ///
    /// # Examples
    ///
    /// ```
    /// match bufslab_uring::Features::probe() {
    ///     Ok(f) => println!("io_uring with buffer rings; bundles: {}", f.recv_bundles),
    ///     Err(e) if e.is_refused() => println!("no io_uring here: {e}"),
    ///     Err(e) => panic!("{e}"),
    /// }
    /// ```
    pub fn probe() -> Result<Features, Error> {
        let ring: IoUring = IoUring::new(8).map_err(Error::classify)?;
        probe_registration(&ring, 0)?;
        Ok(Features {
            recv_bundles: ring.params().is_feature_recvsend_bundle(),
        })
    }
}
