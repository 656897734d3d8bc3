//! The AVX2 block classifier of the structural index (`crate::index`): 64 bytes into two
//! bitmasks in two 32-byte halves of ten vector instructions each.
//!
//! # The classification
//!
//! `tchar` is not a range, so it is looked up: one `vpshufb` by each byte's low nibble, one by
//! its high nibble, and the two results ANDed (the technique of simdjson's character
//! classification). Each bit of a table entry stands for one set of bytes, the product of the
//! high nibbles whose `hi` entry has the bit and the low nibbles whose `lo` entry has it:
//!
//! * bits 0 to 5: high nibble 2 to 7, one bit each; `lo[l]` has bit `h - 2` exactly when
//!   `h << 4 | l` is a `tchar`. So a byte is a `tchar` exactly when the AND has one of them;
//! * bit 7: high nibble 0 or 1, every low nibble: the controls.
//!
//! `vpshufb` gives 0 for an index byte with its high bit set, so every byte from 0x80 on looks
//! up 0 in `lo`: neither `tchar` nor control, as RFC 9110 has obs-text. The AND is then, as a
//! signed byte, positive exactly for a `tchar` (one `vpcmpgtb` against zero) and has its sign
//! bit exactly for a control; OR-ing in a `vpcmpeqb` for DEL gives the stop mask's sign bits.
//! Two `vpmovmskb` move both masks to general registers.
//!
//! # Soundness
//!
//! The intrinsics need AVX2. They run only inside functions compiled with
//! `#[target_feature(enable = "avx2")]`, and those are reached only through an [`Avx2`] value,
//! which [`Avx2::detect`] makes only after `is_x86_feature_detected!("avx2")` said yes (or,
//! built for a CPU with AVX2, `cfg!(target_feature = "avx2")` did). The loads read 32 bytes at
//! offsets 0 and 32 of a `&[u8; 64]`, which is valid for 64 bytes by its type; `vmovdqu` has no
//! alignment requirement.

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_srli_epi16,
};

use crate::index::{Classify, Masks};
use crate::simd::Job;

/// Proof that this CPU runs AVX2: made only by [`Avx2::detect`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// `Some` when the CPU has AVX2.
    #[inline(always)]
    pub(crate) fn detect() -> Option<Avx2> {
        (cfg!(target_feature = "avx2") || std::is_x86_feature_detected!("avx2")).then_some(Avx2(()))
    }

    /// Runs `job` with the AVX2 index scanner, compiled for AVX2.
    #[inline(always)]
    pub(crate) fn run<J: Job>(self, job: J) -> J::Out {
        if cfg!(target_feature = "avx2") {
            // The whole crate is compiled for AVX2 (`-C target-cpu`): no wrapper needed.
            return job.run(crate::index::Indexed(self));
        }
        // SAFETY: `self` exists, so the CPU has AVX2 (`detect`), which is all `run_avx2`'s
        // `target_feature` requires.
        unsafe { run_avx2(self, job) }
    }
}

/// `job` with every function it inlines compiled for AVX2, so that the classifier inlines into
/// the field-line loop.
///
/// # Safety
/// The CPU must have AVX2 (`token` says so, where it came from [`Avx2::detect`]).
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<J: Job>(token: Avx2, job: J) -> J::Out {
    job.run(crate::index::Indexed(token))
}

impl Classify for Avx2 {
    #[inline(always)]
    fn classify(self, block: &[u8; 64]) -> Masks {
        // SAFETY: `self` proves the CPU has AVX2 (see the module's soundness section).
        unsafe { classify(block) }
    }

    #[inline(always)]
    fn target_end(self, buf: &[u8], i: usize) -> usize {
        crate::simd::find_non_target(buf, i)
    }
}

/// The lookup tables (see the module docs), each repeated for both 128-bit lanes, since
/// `vpshufb` looks up within a lane.
const fn tables() -> ([u8; 32], [u8; 32]) {
    let mut lo = [0u8; 32];
    let mut hi = [0u8; 32];
    let mut l = 0;
    while l < 16 {
        let mut e = 0x80u8;
        let mut h = 2;
        while h < 8 {
            if crate::scan::is_tchar((h << 4 | l) as u8) {
                e |= 1 << (h - 2);
            }
            h += 1;
        }
        lo[l] = e;
        lo[l + 16] = e;
        hi[l] = match l {
            0 | 1 => 0x80,
            2..=7 => 1 << (l - 2),
            _ => 0,
        };
        hi[l + 16] = hi[l];
        l += 1;
    }
    (lo, hi)
}

const TABLES: ([u8; 32], [u8; 32]) = tables();
// As constants, not statics: the compiler then loads them from its constant pool where they
// are used, rather than holding them in registers across the parser's loop (and spilling).
// SAFETY: `__m256i` is 32 bytes of plain data; every bit pattern is a valid value.
const LO: __m256i = unsafe { core::mem::transmute::<[u8; 32], __m256i>(TABLES.0) };
// SAFETY: as for `LO`.
const HI: __m256i = unsafe { core::mem::transmute::<[u8; 32], __m256i>(TABLES.1) };

/// The masks of `block` (see the module docs).
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn classify(block: &[u8; 64]) -> Masks {
    let p = block.as_ptr();
    // SAFETY: `block` is valid for 64 bytes, so bytes 0..32 and 32..64 are in it; the loads
    // are unaligned ones; AVX2 is enabled (the caller's contract).
    let (a, b) = unsafe {
        (
            _mm256_loadu_si256(p.cast::<__m256i>()),
            _mm256_loadu_si256(p.add(32).cast::<__m256i>()),
        )
    };
    // SAFETY: register arithmetic; AVX2 is enabled.
    let ((sa, ta), (sb, tb)) = unsafe { (half(a), half(b)) };
    Masks {
        stop: u64::from(sa) | u64::from(sb) << 32,
        name_end: !(u64::from(ta) | u64::from(tb) << 32),
    }
}

/// The stop mask and the `tchar` mask of 32 bytes.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)]
unsafe fn half(v: __m256i) -> (u32, u32) {
    // SAFETY: register arithmetic; AVX2 is enabled (the caller's contract).
    unsafe {
        let nibble = _mm256_and_si256(_mm256_srli_epi16::<4>(v), _mm256_set1_epi8(0x0f));
        let t = _mm256_and_si256(_mm256_shuffle_epi8(LO, v), _mm256_shuffle_epi8(HI, nibble));
        let tchar = _mm256_cmpgt_epi8(t, _mm256_setzero_si256());
        let stop = _mm256_or_si256(t, _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x7f)));
        (
            _mm256_movemask_epi8(stop) as u32,
            _mm256_movemask_epi8(tchar) as u32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::classify_bytewise;

    #[test]
    fn classify_matches_the_bytes_definition_for_every_byte_in_every_lane() {
        let Some(avx2) = Avx2::detect() else {
            eprintln!("skipped: this CPU has no AVX2");
            return;
        };
        // Under Miri, which checks the loads and interprets the intrinsics, a byte of each
        // class in the lanes at the halves' edges; natively every byte in every lane.
        let (bytes, lanes): (Vec<u8>, Vec<usize>) = if cfg!(miri) {
            (
                vec![0, b'\t', b' ', b':', b'a', 0x7f, 0x80],
                vec![0, 31, 32, 63],
            )
        } else {
            ((0..=255).collect(), (0..64).collect())
        };
        for &b in &bytes {
            for &k in &lanes {
                let mut block = [b'a'; 64];
                block[k] = b;
                assert_eq!(
                    avx2.classify(&block),
                    classify_bytewise(&block),
                    "{b:#x} at {k}"
                );
            }
            let block = [b; 64];
            assert_eq!(avx2.classify(&block), classify_bytewise(&block), "{b:#x}");
        }
    }
}
