//! The crate's only `unsafe` code: the vector scanners, and the choice between them at run time.
//!
//! * `sse2`: the search scanners on SSE2, part of the x86_64 baseline (no detection needed);
//!   also the request-target and Host scans of every x86_64 backend;
//! * `avx2`: the structural index's block classifier (`crate::index`) on AVX2, detected at run
//!   time.
//!
//! Each module argues its own soundness. What they share: the only memory an intrinsic reads
//! is a `&[u8; N]` of the size it loads, and an intrinsic the baseline lacks runs only inside a
//! `#[target_feature]` function reached through a token ([`avx2::Avx2`]) that exists only where
//! the CPU has the feature.
//!
//! A head parser hands `Backend::run` a [`Job`], which is generic over the [`Scanner`]: the job is
//! compiled once per scanner. The default backend's copy inlines into the caller; the AVX2 copy
//! sits inside a `#[target_feature(enable = "avx2")]` function, so that the whole field-line
//! loop (not only the classifier) is AVX2 code and the intrinsics inline into it. The branch on
//! the backend is taken once per parse call.

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
mod sse2;

pub(crate) use sse2::{
    find_ctl_but_tab, find_name_end, find_non_target, plain_host, scan_line_start,
};

use crate::scanner::{Portable, Scanner};

/// Work that runs with whichever [`Scanner`] the backend is: a parse call.
pub(crate) trait Job {
    /// The work's result.
    type Out;

    /// Does the work with `scanner`.
    fn run<S: Scanner>(self, scanner: S) -> Self::Out;
}

/// A backend as it will run: the vector ones with the token that proves the CPU has them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resolved {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::Avx2),
}

/// Runs `job` with the default backend's scanner (`Backend::Auto`): `Sse2` on x86_64,
/// `Portable` elsewhere. Inlined into the caller; the other backends run through the cold
/// [`run_other`], so that this copy's code is not shaped around calls it never makes
/// (measured: a `match` with a call in its other arms cost the inlined parse about 50
/// instructions per head).
#[inline(always)]
pub(crate) fn run_default<J: Job>(job: J) -> J::Out {
    #[cfg(target_arch = "x86_64")]
    return job.run(crate::scanner::Sse2);
    #[cfg(not(target_arch = "x86_64"))]
    return job.run(Portable);
}

/// Runs `job` with a forced backend's scanner, out of line.
#[cold]
#[inline(never)]
pub(crate) fn run_other<J: Job>(backend: Resolved, job: J) -> J::Out {
    match backend {
        Resolved::Portable => job.run(Portable),
        #[cfg(target_arch = "x86_64")]
        Resolved::Sse2 => job.run(crate::scanner::Sse2),
        #[cfg(target_arch = "x86_64")]
        Resolved::Avx2(token) => token.run(job),
    }
}
