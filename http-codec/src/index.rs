//! The structural index: every byte of a 64-byte block classified at once, then walked bit by
//! bit.
//!
//! # The algorithm
//!
//! A search scanner (`crate::scanner`) answers "where is the next `:`" and "where is the next
//! CR" one after the other: each answer is a chain of load, compare, mask and bit search that
//! must finish before the next search can start where it ended. On a field line that is two
//! such chains, and their latency, not their instruction count, is what a core with slower
//! vector-to-integer moves pays for.
//!
//! An index scanner turns that around, as simdjson does for JSON (Langdale and Lemire, *Parsing
//! Gigabytes of JSON per Second*, 2019) and as Kazuho Oku measured for picohttpparser's AVX2
//! experiment in 2014. A [`Classify`] implementation (the vector code, in `crate::simd`) turns
//! 64 input bytes into two bitmasks ([`Masks`]), bit *k* for byte *k*:
//!
//! * `name_end`: the byte is not a `tchar` (RFC 9110 §5.6.2), so it ends a field name: the
//!   `:`, but also SP, controls, and anything invalid in a name;
//! * `stop`: the byte is a control byte (below 0x20, HTAB included) or DEL, so it ends a field
//!   value: the CR of CR LF, or a byte no value may hold (HTAB is the one control a value may
//!   hold; the parser skips it).
//!
//! The classification has no dependency between blocks, and a 64-byte block costs a fixed
//! handful of vector instructions whatever it holds. The parser then asks [`IndexLines`] for
//! the first set bit at or after an index: a mask with the bits below the index cleared and a
//! `tzcnt`, a few scalar instructions with the masks already in registers. A field line is two
//! such questions (name end from the line's start, stop from the name's end), and both the
//! name and the value are validated by them: a name is all `tchar` exactly when its first
//! non-`tchar` is the `:`, a value holds no invalid byte exactly when its first stop is the CR.
//!
//! # One block at a time
//!
//! The cursor holds one block's masks. Every question the parser asks comes at or after the
//! previous answer (a name ends before its line's stop, and the next line starts after it), so
//! the cursor only ever moves forward: when a question's index is past the block, or the block
//! holds no answer, it classifies the next 64 bytes. Bytes past the end of the head are never
//! classified beyond the block the head ends in, so a pipelined buffer or a body behind the
//! head costs nothing.
//!
//! The last block of the input is usually shorter than 64 bytes. It is classified from the
//! last 64 bytes of the input (a load that overlaps bytes already classified, whose bits are
//! shifted out), and from a zero-padded copy only when the whole input is shorter than 64
//! bytes. Either way a bit is set at the input's end, so a search that finds nothing stops
//! there and answers `view.len()`, as the search scanners do.

use crate::scanner::{FieldLines, Scanner};

/// Bit *k* describes byte *k* of a 64-byte block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Masks {
    /// Controls (HTAB included) and DEL: where a field value ends.
    pub(crate) stop: u64,
    /// Bytes that are not `tchar`: where a field name ends.
    pub(crate) name_end: u64,
}

/// A block classifier: the vector part of an index scanner. `Copy` and zero-sized; a value is a
/// proof that the CPU can run it (see `crate::simd`).
pub(crate) trait Classify: Copy {
    /// The masks of the 64 bytes of `block`.
    fn classify(self, block: &[u8; 64]) -> Masks;

    /// The request-target scan this classifier's CPU runs best.
    fn target_end(self, buf: &[u8], i: usize) -> usize;
}

/// The masks by the bytes' definition, one byte at a time: the reference the vector
/// classifiers are tested against.
#[cfg(test)]
pub(crate) fn classify_bytewise(block: &[u8; 64]) -> Masks {
    let mut m = Masks {
        stop: 0,
        name_end: 0,
    };
    for (k, &b) in block.iter().enumerate() {
        if b < 0x20 || b == 0x7f {
            m.stop |= 1 << k;
        }
        if !crate::scan::TCHAR[b as usize] {
            m.name_end |= 1 << k;
        }
    }
    m
}

/// An index scanner over the classifier `C`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Indexed<C>(pub(crate) C);

impl<C: Classify> Scanner for Indexed<C> {
    type Lines = IndexLines<C>;

    #[inline(always)]
    fn lines(self, view: &[u8], from: usize) -> IndexLines<C> {
        IndexLines::new(self.0, view, from)
    }

    #[inline(always)]
    fn target_end(self, buf: &[u8], i: usize) -> usize {
        self.0.target_end(buf, i)
    }
}

/// The cursor: one block's masks and where the block starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexLines<C> {
    classify: C,
    /// Index of the block's first byte.
    base: usize,
    masks: Masks,
}

impl<C: Classify> IndexLines<C> {
    #[inline(always)]
    fn new(classify: C, view: &[u8], from: usize) -> IndexLines<C> {
        let mut lines = IndexLines {
            classify,
            base: from,
            masks: Masks {
                stop: 0,
                name_end: 0,
            },
        };
        lines.masks = lines.load(view);
        lines
    }

    /// The masks of the block at `self.base`.
    #[inline(always)]
    fn load(&self, view: &[u8]) -> Masks {
        match view.get(self.base..).and_then(|s| s.first_chunk::<64>()) {
            Some(block) => self.classify.classify(block),
            None => self.load_last(view),
        }
    }

    /// The masks of the last, shorter block, with a bit at the input's end in each. Inlined
    /// like the rest: out of line it would be compiled without the classifier's target
    /// features, and nearly every call classifies one last block.
    #[inline(always)]
    fn load_last(&self, view: &[u8]) -> Masks {
        // `base + 64 > view.len()` here, and the cursor never starts past the input's end.
        let rem = view.len().saturating_sub(self.base).min(63);
        let end = 1u64 << rem;
        let m = match view.last_chunk::<64>() {
            // The input's last 64 bytes end where the block would: shift out the lanes before
            // `base` (`64 - rem` of them; when `rem` is 0 every lane goes and `end` is bit 0).
            Some(last) if rem > 0 => {
                let m = self.classify.classify(last);
                let shift = 64 - rem;
                Masks {
                    stop: m.stop >> shift,
                    name_end: m.name_end >> shift,
                }
            }
            Some(_) => Masks {
                stop: 0,
                name_end: 0,
            },
            None => {
                // The whole input is shorter than a block: classify a zero-padded copy. The
                // padding's bits are set in both masks (NUL is a control and not a `tchar`),
                // and `end` is the first of them.
                let mut block = [0u8; 64];
                let tail = view.get(self.base..).unwrap_or_default();
                if let Some(dst) = block.get_mut(..tail.len()) {
                    dst.copy_from_slice(tail);
                }
                self.classify.classify(&block)
            }
        };
        Masks {
            stop: m.stop | end,
            name_end: m.name_end | end,
        }
    }

    /// The first index at or after `pos` whose bit `pick` sets, or `view.len()`.
    #[inline(always)]
    fn next(&mut self, view: &[u8], mut pos: usize, pick: impl Fn(&Masks) -> u64) -> usize {
        debug_assert!(pos >= self.base, "the index cursor moved backwards");
        loop {
            let off = pos.wrapping_sub(self.base);
            if off < 64 {
                let m = pick(&self.masks) & (u64::MAX << off);
                if m != 0 {
                    return self.base + m.trailing_zeros() as usize;
                }
            }
            // Nothing at or after `pos` in this block. A block that reaches the input's end
            // holds the end bit, so only a full block ending exactly at the end gets here
            // without one.
            if self.base + 64 >= view.len() {
                return view.len();
            }
            self.base += 64;
            self.masks = self.load(view);
            pos = pos.max(self.base);
        }
    }
}

impl<C: Classify> FieldLines for IndexLines<C> {
    #[inline(always)]
    fn line_start(&mut self, view: &[u8], i: usize) -> (usize, usize) {
        let ne = self.next(view, i, |m| m.name_end);
        (ne, self.next(view, ne, |m| m.stop))
    }

    // The index's name end is always a non-`tchar`, so the parser never asks; a plain scan
    // that leaves the cursor where it is answers if it did.
    #[inline(always)]
    fn name_end(&mut self, view: &[u8], i: usize) -> usize {
        crate::scan::find_name_end(view, i)
    }

    #[inline(always)]
    fn value_end(&mut self, view: &[u8], i: usize) -> usize {
        let stop = self.next(view, i, |m| m.stop);
        crate::scan::past_tabs(view, stop, |k| self.next(view, k, |m| m.stop))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time classifier as a `Classify`: the walk tested on its own.
    #[derive(Clone, Copy)]
    struct Bytewise;

    impl Classify for Bytewise {
        fn classify(self, block: &[u8; 64]) -> Masks {
            classify_bytewise(block)
        }

        fn target_end(self, buf: &[u8], i: usize) -> usize {
            crate::scan::find_non_target(buf, i)
        }
    }

    fn first(view: &[u8], from: usize, p: impl Fn(u8) -> bool) -> usize {
        (from..view.len())
            .find(|&k| p(view[k]))
            .unwrap_or(view.len())
    }

    #[test]
    fn walk_finds_every_delimiter_at_every_offset() {
        // A stop or name end at every position of inputs around the block sizes, asked from
        // every start: the tail block (overlapping load and padded copy) and block crossings.
        // Under Miri (which checks every load of the cursor's blocks), fewer lengths and
        // positions: the block edges.
        let lens: &[usize] = if cfg!(miri) {
            &[0, 1, 63, 64, 65, 129]
        } else {
            &[0, 1, 5, 63, 64, 65, 100, 127, 128, 129, 200]
        };
        for &len in lens {
            let positions: Vec<usize> = if cfg!(miri) {
                [0, 1, 62, 63, 64, 65, 127, 128]
                    .into_iter()
                    .filter(|&p| p < len.max(1))
                    .collect()
            } else {
                (0..len.max(1)).collect()
            };
            for pos in positions {
                for b in [b':', b'\r', b'\t', 0x7f, b'a', 0x80] {
                    let mut view = vec![b'a'; len];
                    if let Some(x) = view.get_mut(pos) {
                        *x = b;
                    }
                    for from in [0, pos.saturating_sub(1), pos, (pos + 1).min(len)] {
                        let mut lines = Indexed(Bytewise).lines(&view, from);
                        let (ne, stop) = lines.field_line(&view, from);
                        let exp_ne = first(&view, from, |b| !crate::scan::TCHAR[b as usize]);
                        let exp_stop =
                            first(&view, exp_ne, |b| (b < 0x20 && b != b'\t') || b == 0x7f);
                        assert_eq!((ne, stop), (exp_ne, exp_stop), "{len} {pos} {b} {from}");
                    }
                }
            }
        }
    }

    #[test]
    fn walk_moves_across_many_blocks() {
        // Lines of every length up to 150 back to back: every crossing of a block boundary.
        let mut view = Vec::new();
        let mut starts = Vec::new();
        for n in 1..if cfg!(miri) { 40 } else { 150 } {
            starts.push(view.len());
            view.extend_from_slice(b"X-A:");
            view.extend(std::iter::repeat(b'v').take(n));
            view.extend_from_slice(b"\r\n");
        }
        view.extend_from_slice(b"\r\n");
        let mut lines = Indexed(Bytewise).lines(&view, 0);
        for &s in &starts {
            let (ne, stop) = lines.field_line(&view, s);
            assert_eq!(view[ne], b':');
            assert_eq!(&view[stop..stop + 2], b"\r\n");
            assert_eq!(ne, s + 3);
        }
    }
}
