//! [`Error`]: why a ring or a buffer ring could not be set up, precise enough to print.

use std::fmt;
use std::io;

/// Why io_uring, or a provided buffer ring on it, could not be set up.
///
/// The first five variants mean "this process may not use io_uring the way it asked"
/// ([`is_refused`](Self::is_refused)): a server falls back to another driver. The first three
/// are the kernel refusing io_uring itself; the other two, a feature or a size it was asked
/// for.
/// [`Error::classify`] maps the `io::Error` of any io_uring call (`IoUring::builder().build()`,
/// a register call) to one of them.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// `EPERM` with the `kernel.io_uring_disabled` sysctl set: 2 turns io_uring off for every
    /// process, 1 leaves it to members of `kernel.io_uring_group` (and `CAP_SYS_ADMIN`).
    Disabled {
        /// The value of `/proc/sys/kernel/io_uring_disabled`.
        sysctl: u8,
    },
    /// `EPERM` or `EACCES` with the sysctl allowing io_uring: a seccomp filter (the default
    /// profile of Docker and containerd refuses the io_uring calls) or a security module.
    Denied,
    /// `ENOSYS`: the kernel has no io_uring (built without it, or older than 5.1).
    NotSupported,
    /// `EINVAL`: the kernel does not know a flag, an operation or a register call that was
    /// asked for (provided buffer rings need 5.19).
    Invalid,
    /// `ENOMEM`: the ring's memory is charged to the locked-memory limit (`RLIMIT_MEMLOCK`,
    /// `ulimit -l`) on kernels before 5.12, and the limit is too low; or the kernel is out of
    /// memory.
    LockedMemory,
    /// `EEXIST` on registering a buffer ring: the group id is taken on this ring, or the
    /// register call came from a thread other than the submitter of a `SINGLE_ISSUER` ring.
    GroupInUse {
        /// The buffer group id asked for.
        group: u16,
    },
    /// A buffer ring's entry count must be a power of two from 1 to 32768.
    Entries {
        /// The count asked for.
        requested: usize,
    },
    /// The pool could not rent the block the buffer ring is sized from, or its blocks are larger
    /// than a ring entry can describe (4 GiB).
    Pool(bufslab::Error),
    /// Any other error of an io_uring call.
    Io(io::Error),
}

impl Error {
    /// Maps the error of an io_uring call (setting up a ring, registering) to its cause, reading
    /// `/proc/sys/kernel/io_uring_disabled` to tell a disabled io_uring from a seccomp filter.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_uring::Error;
    ///
    /// let e = Error::classify(std::io::Error::from_raw_os_error(libc::ENOSYS));
    /// assert!(matches!(e, Error::NotSupported));
    /// assert!(e.is_refused());
    /// ```
    pub fn classify(err: io::Error) -> Error {
        match err.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => match disabled_sysctl() {
                Some(sysctl) if sysctl != 0 => Error::Disabled { sysctl },
                _ => Error::Denied,
            },
            Some(libc::ENOSYS) => Error::NotSupported,
            Some(libc::EINVAL) => Error::Invalid,
            Some(libc::ENOMEM) => Error::LockedMemory,
            _ => Error::Io(err),
        }
    }

    /// `true` when io_uring (or the feature asked for) is refused to this process: the caller
    /// should use another I/O path, not retry.
    pub fn is_refused(&self) -> bool {
        matches!(
            self,
            Error::Disabled { .. }
                | Error::Denied
                | Error::NotSupported
                | Error::Invalid
                | Error::LockedMemory
        )
    }
}

impl Error {
    /// `true` when the kernel refuses io_uring itself to this process (the first three
    /// variants: `kernel.io_uring_disabled`, a seccomp filter or security module, no io_uring
    /// at all), as opposed to a feature or a size it does not offer. Where this is `false`, a
    /// kernel that allows io_uring failed a caller: what a test that skips on a refusal must
    /// not skip.
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_uring::Error;
    ///
    /// let e = Error::classify(std::io::Error::from_raw_os_error(libc::ENOSYS));
    /// assert!(e.is_kernel_refusal());
    /// let e = Error::classify(std::io::Error::from_raw_os_error(libc::EINVAL));
    /// assert!(e.is_refused() && !e.is_kernel_refusal());
    /// ```
    pub fn is_kernel_refusal(&self) -> bool {
        matches!(
            self,
            Error::Disabled { .. } | Error::Denied | Error::NotSupported
        )
    }
}

/// `kernel.io_uring_disabled` (Linux 6.6+); `None` where the file does not exist.
fn disabled_sysctl() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Disabled { sysctl: 2 } => {
                f.write_str("io_uring is disabled (kernel.io_uring_disabled = 2)")
            }
            Error::Disabled { sysctl } => write!(
                f,
                "io_uring is restricted to kernel.io_uring_group (kernel.io_uring_disabled = {sysctl})"
            ),
            Error::Denied => f.write_str(
                "io_uring is denied (EPERM): a seccomp profile or a security module blocks it",
            ),
            Error::NotSupported => f.write_str("io_uring is not supported by this kernel (ENOSYS)"),
            Error::Invalid => f.write_str(
                "io_uring refused a flag or call this kernel does not support (EINVAL)",
            ),
            Error::LockedMemory => f.write_str(
                "io_uring could not lock its memory (ENOMEM): raise RLIMIT_MEMLOCK (ulimit -l)",
            ),
            Error::GroupInUse { group } => write!(
                f,
                "buffer group {group} is already registered on this ring, or the ring's single \
                 issuer is another thread (EEXIST)"
            ),
            Error::Entries { requested } => write!(
                f,
                "a buffer ring needs a power of two from 1 to 32768 entries, not {requested}"
            ),
            Error::Pool(e) => write!(f, "buffer ring: {e}"),
            Error::Io(e) => write!(f, "io_uring: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Pool(e) => Some(e),
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<bufslab::Error> for Error {
    fn from(e: bufslab::Error) -> Self {
        Error::Pool(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_map_to_causes() {
        let of = |errno| Error::classify(io::Error::from_raw_os_error(errno));
        assert!(matches!(of(libc::ENOSYS), Error::NotSupported));
        assert!(matches!(of(libc::EINVAL), Error::Invalid));
        assert!(matches!(of(libc::ENOMEM), Error::LockedMemory));
        assert!(matches!(of(libc::EBADF), Error::Io(_)));
        assert!(!of(libc::EBADF).is_refused());
        // EPERM: which of the two depends on this machine's sysctl, but it is always a refusal.
        let eperm = of(libc::EPERM);
        assert!(matches!(eperm, Error::Disabled { .. } | Error::Denied));
        assert!(eperm.is_refused());
        match disabled_sysctl() {
            Some(v) if v != 0 => {
                assert!(matches!(eperm, Error::Disabled { sysctl } if sysctl == v))
            }
            _ => assert!(matches!(eperm, Error::Denied)),
        }
    }

    #[test]
    fn messages_name_the_cause() {
        assert!(Error::Disabled { sysctl: 2 }
            .to_string()
            .contains("io_uring_disabled = 2"));
        assert!(Error::Disabled { sysctl: 1 }
            .to_string()
            .contains("io_uring_group"));
        assert!(Error::Denied.to_string().contains("seccomp"));
        assert!(Error::LockedMemory.to_string().contains("RLIMIT_MEMLOCK"));
        assert!(Error::Entries { requested: 3 }
            .to_string()
            .contains("not 3"));
        assert!(Error::GroupInUse { group: 7 }
            .to_string()
            .contains("group 7"));
    }
}
