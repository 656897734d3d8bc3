//! Which implementation of the head parsers' byte scanning runs.

use crate::simd::{Job, Resolved};

/// The implementation of the head parsers' byte scanning (the search for the end of the
/// request-target, of each field name and of each field value).
///
/// Every backend gives the same answers for every input, so the choice is only about speed.
/// The default, [`Backend::Auto`], is the one measured fastest: [`Sse2`](Backend::Sse2) on
/// x86_64, [`Portable`](Backend::Portable) elsewhere. Forcing one is for benchmarks (the
/// workspace's `codec_interleaved` bench times each one this CPU runs) and for testing the
/// backends against each other.
///
/// | backend | how | where |
/// |---|---|---|
/// | [`Avx2`](Backend::Avx2) | structural index: each 64-byte block classified at once into bitmasks, then walked with bit scans | x86_64 with AVX2 (detected at run time) |
/// | [`Sse2`](Backend::Sse2) | one delimiter search at a time, 16 bytes a step | every x86_64 CPU |
/// | [`Portable`](Backend::Portable) | one delimiter search at a time, 8 bytes a step (SWAR) | every target |
///
/// Why `Auto` is not `Avx2` where the CPU has it: on the cores measured so far (AMD Zen 4) the
/// structural index is no faster than the SSE2 search on the heads clients send, for two
/// reasons the design notes (`DESIGN.md`) show with instruction counts. Classifying a block
/// costs about as many instructions per byte as searching it 16 bytes at a time, and reaching
/// the AVX2 code from a caller compiled for the x86_64 baseline takes a call per parse that the
/// inlined SSE2 path does not pay. Built for a CPU with AVX2 (`-C target-cpu=native`), the
/// index inlines like the search does.
///
/// # Examples
///
/// ```
/// use bufslab_http::{Backend, Config, HeaderSlot, Parser};
///
/// let mut slots = [HeaderSlot::EMPTY; 8];
/// let head = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
/// for &backend in Backend::ALL {
///     // A backend the CPU lacks runs as the nearest one before it that the CPU has.
///     let mut parser = Parser::new(Config::DEFAULT.with_backend(backend));
///     assert!(backend.resolved() <= backend);
///     let req = parser.parse(head, &mut slots)?.complete().unwrap();
///     assert_eq!(req.head_len(), head.len());
/// }
/// # Ok::<(), bufslab_http::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable SWAR scans, 8 bytes a step: every target.
    Portable,
    /// SSE2 scans, 16 bytes a step: every x86_64 CPU.
    Sse2,
    /// The AVX2 structural index: x86_64 CPUs with AVX2 (Intel since Haswell, AMD since
    /// Excavator).
    Avx2,
    /// The backend measured fastest (the default): `Sse2` on x86_64, `Portable` elsewhere.
    #[default]
    Auto,
}

impl Backend {
    /// Every backend but [`Auto`](Backend::Auto), in the order of the instruction sets they
    /// need.
    pub const ALL: &'static [Backend] = &[Backend::Portable, Backend::Sse2, Backend::Avx2];

    /// Whether this CPU can run the backend as such (`Auto` always can).
    ///
    /// # Examples
    ///
    /// ```
    /// use bufslab_http::Backend;
    /// assert!(Backend::Portable.is_supported());
    /// assert!(Backend::Auto.is_supported());
    /// assert_eq!(Backend::Sse2.is_supported(), cfg!(target_arch = "x86_64"));
    /// ```
    #[must_use]
    pub fn is_supported(self) -> bool {
        self == Backend::Auto || self.resolved() == self
    }

    /// The backend that runs when this one is asked for: itself where the CPU has it, else the
    /// nearest one before it in [`ALL`](Self::ALL) that the CPU has; for `Auto`, `Sse2` on
    /// x86_64 and `Portable` elsewhere.
    #[must_use]
    pub fn resolved(self) -> Backend {
        match self.resolve() {
            Resolved::Portable => Backend::Portable,
            #[cfg(target_arch = "x86_64")]
            Resolved::Sse2 => Backend::Sse2,
            #[cfg(target_arch = "x86_64")]
            Resolved::Avx2(_) => Backend::Avx2,
        }
    }

    /// Runs a parse with this backend: the default inline, a forced one out of line. The one
    /// compare is all the choice costs the default path.
    #[inline(always)]
    pub(crate) fn run<J: Job>(self, job: J) -> J::Out {
        if self == Backend::Auto {
            return crate::simd::run_default(job);
        }
        crate::simd::run_other(self.resolve(), job)
    }

    /// [`resolved`](Self::resolved), with the token a vector backend runs with.
    #[inline(always)]
    pub(crate) fn resolve(self) -> Resolved {
        #[cfg(target_arch = "x86_64")]
        {
            if self == Backend::Avx2 {
                if let Some(token) = crate::simd::avx2::Avx2::detect() {
                    return Resolved::Avx2(token);
                }
            }
            if self != Backend::Portable {
                return Resolved::Sse2;
            }
        }
        Resolved::Portable
    }
}

impl core::fmt::Display for Backend {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Backend::Portable => "portable",
            Backend::Sse2 => "sse2",
            Backend::Avx2 => "avx2",
            Backend::Auto => "auto",
        })
    }
}
