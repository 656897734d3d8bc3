//! What a head parser asks of the bytes, and the per-delimiter scanners that answer it.
//!
//! A head parser needs three searches: the end of a request-target, and for every field line
//! the end of its name (the first byte that is not a `tchar`, which must be the `:`) and the end
//! of its value (the first control byte or DEL, which must be the CR of CR LF). A [`Scanner`]
//! answers them; each [`Backend`](crate::Backend) is one. The parsers are generic over it and
//! are compiled once per scanner, so the choice costs one branch per call, not per search.
//!
//! Two kinds of scanner exist:
//! * *search* scanners (here): each question is a fresh scan from the given index, one
//!   delimiter at a time, 8 bytes (`Portable`, SWAR) or 16 bytes (`Sse2`) per step;
//! * *index* scanners (`crate::index`): every byte of a 64-byte block is classified at once into
//!   bitmasks, and each answer is a bit search in the masks already computed.
//!
//! They give the same answers for every input; `tests/backends.rs` holds them to that.

/// The delimiter searches of a head parser. `Copy` and usually zero-sized: a token that says
/// which implementation to run (and, for the vector ones, that the CPU has it).
pub(crate) trait Scanner: Copy {
    /// The cursor over one call's field lines.
    type Lines: FieldLines;

    /// A cursor over the field lines of `view`, the first of which starts at `from`.
    fn lines(self, view: &[u8], from: usize) -> Self::Lines;

    /// Index of the first byte at or after `i` that cannot be in a request-target (not VCHAR,
    /// or `#`), or `buf.len()`.
    fn target_end(self, buf: &[u8], i: usize) -> usize;
}

/// A cursor over a head's field lines, asked about each line in turn.
///
/// Every call must pass the same `view`, and an `i` at or after every index returned before:
/// index scanners only move forward, which is what lets them classify each block once.
pub(crate) trait FieldLines {
    /// For the field line starting at `i`: `(name end, first control)`. `name end` is an index
    /// at or after `i` up to which every byte is a `tchar`, at the first non-`tchar` or at a
    /// rarer `tchar` (one that is not a letter, digit or `-`), where the name goes on: the
    /// caller passes over it with [`name_end`](Self::name_end). `first control` is the index of
    /// the first control byte (HTAB included) or DEL at or after the name's end; a line nearly
    /// always ends there, in CR LF, and a value's HTAB is passed over with
    /// [`value_end`](Self::value_end). Each is `view.len()` when there is none.
    fn line_start(&mut self, view: &[u8], i: usize) -> (usize, usize);

    /// Index of the first non-`tchar` byte at or after `i`, or `view.len()`. Asked only after
    /// [`line_start`](Self::line_start) stopped at a `tchar`, and so before any answer past the
    /// line's first control byte.
    fn name_end(&mut self, view: &[u8], i: usize) -> usize;

    /// Index of the first control byte other than HTAB, or DEL, at or after `i`, or
    /// `view.len()`.
    fn value_end(&mut self, view: &[u8], i: usize) -> usize;

    /// [`line_start`](Self::line_start) with the value's HTABs passed over: `(name end, stop)`,
    /// `stop` the first control byte other than HTAB, or DEL, at or after `name end`.
    #[cfg(test)]
    fn field_line(&mut self, view: &[u8], i: usize) -> (usize, usize) {
        let (ne, stop) = self.line_start(view, i);
        let ne = match view.get(ne) {
            Some(&b) if crate::scan::TCHAR[b as usize] => self.name_end(view, ne + 1),
            _ => ne,
        };
        match view.get(stop) {
            Some(b'\t') => (ne, self.value_end(view, stop + 1)),
            _ => (ne, stop),
        }
    }
}

/// The portable scanners of [`crate::scan`] (SWAR, 8 bytes a step), on every target.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

impl Scanner for Portable {
    type Lines = Portable;

    #[inline(always)]
    fn lines(self, _: &[u8], _: usize) -> Portable {
        Portable
    }

    #[inline(always)]
    fn target_end(self, buf: &[u8], i: usize) -> usize {
        crate::scan::find_non_target(buf, i)
    }
}

impl FieldLines for Portable {
    #[inline(always)]
    fn line_start(&mut self, view: &[u8], i: usize) -> (usize, usize) {
        let ne = crate::scan::find_name_end(view, i);
        (ne, crate::scan::find_ctl(view, ne))
    }

    #[inline(always)]
    fn name_end(&mut self, view: &[u8], i: usize) -> usize {
        crate::scan::find_name_end(view, i)
    }

    #[inline(always)]
    fn value_end(&mut self, view: &[u8], i: usize) -> usize {
        let stop = crate::scan::find_ctl(view, i);
        crate::scan::past_tabs(view, stop, |k| crate::scan::find_ctl(view, k))
    }
}

/// The SSE2 scanners of [`crate::simd`] (16 bytes a step, part of the x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sse2;

#[cfg(target_arch = "x86_64")]
impl Scanner for Sse2 {
    type Lines = Sse2;

    #[inline(always)]
    fn lines(self, _: &[u8], _: usize) -> Sse2 {
        Sse2
    }

    #[inline(always)]
    fn target_end(self, buf: &[u8], i: usize) -> usize {
        crate::simd::find_non_target(buf, i)
    }
}

#[cfg(target_arch = "x86_64")]
impl FieldLines for Sse2 {
    #[inline(always)]
    fn line_start(&mut self, view: &[u8], i: usize) -> (usize, usize) {
        crate::simd::scan_line_start(view, i)
    }

    #[inline(always)]
    fn name_end(&mut self, view: &[u8], i: usize) -> usize {
        crate::simd::find_name_end(view, i)
    }

    #[inline(always)]
    fn value_end(&mut self, view: &[u8], i: usize) -> usize {
        crate::simd::find_ctl_but_tab(view, i)
    }
}
