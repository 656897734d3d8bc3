//! Byte classification: lookup tables and 8-bytes-at-a-time (SWAR) scanners.
//!
//! Everything here is safe code. These are the portable scanners: `crate::simd` uses them on
//! non-x86_64 targets and for slices shorter than 16 bytes, and its tests use them as the
//! reference for the SSE2 versions. The SWAR scanners load 8 bytes as a little-endian `u64` and
//! compute a mask whose lowest set high bit marks the first interesting byte. The classic
//! "has a byte less than n" trick can flag false positives, but only in bytes *above* a true
//! positive (the borrow only propagates upwards), so the lowest flagged byte is always exact,
//! which is all a "find first" scan needs. (Auto-vectorised 16-byte chunks were tried and
//! measured slower: LLVM round-trips the lane mask through the stack.)

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Builds a 256-entry membership table from a predicate, at compile time.
macro_rules! byte_table {
    (|$b:ident| $pred:expr) => {{
        let mut t = [false; 256];
        let mut i = 0usize;
        while i < 256 {
            let $b = i as u8;
            t[i] = $pred;
            i += 1;
        }
        t
    }};
}

/// Whether `b` is a `tchar` (RFC 9110 §5.6.2): the bytes of methods, field names and transfer
/// codings. A `const fn`, so that the vector classifiers' tables are built from it too.
pub(crate) const fn is_tchar(b: u8) -> bool {
    matches!(b,
        b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`'
        | b'|' | b'~' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
}

/// [`is_tchar`] as a table.
pub(crate) static TCHAR: [bool; 256] = byte_table!(|b| is_tchar(b));

/// `unreserved / sub-delims` (RFC 3986 §2.2, §2.3): a reg-name's bytes besides
/// percent-encodings, and so nearly every Host value's.
pub(crate) static REG_NAME_CHAR: [bool; 256] = byte_table!(|b| matches!(b,
    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~'
    | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='));

/// Bytes of a URI scheme after the first letter (RFC 3986 §3.1).
pub(crate) static SCHEME_CHAR: [bool; 256] = byte_table!(|b| matches!(b,
    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'+' | b'-' | b'.'));

#[inline(always)]
fn word(c: &[u8; 8]) -> u64 {
    u64::from_le_bytes(*c)
}

// The classifiers below first clear each byte's high bit (`y = w & 0x7f..`), so that adding a
// per-byte constant can never carry into the next byte: every lane is then exact, and
// `trailing_zeros` finds the first flagged byte. Bytes with the high bit set are handled by
// looking at `w` itself.

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Mask of control bytes (`< 0x20`) and DEL: `y + 0x60` reaches 0x80 exactly when `y >= 0x20`,
/// `y + 1` exactly when `y == 0x7f`.
#[inline(always)]
const fn ctl_mask(w: u64) -> u64 {
    let y = w & LOW7;
    (!y.wrapping_add(LO * 0x60) | y.wrapping_add(LO)) & !w & HI
}

/// Mask of bytes that cannot be in a request-target: not VCHAR (`0x21..=0x7e`: below 0x21,
/// DEL, or high bit set), or `#`. `y ^ '#'` is zero only in a `#` lane, and adding 0x7f to a
/// 7-bit lane reaches its high bit exactly when the lane is not zero.
#[inline(always)]
const fn non_target_mask(w: u64) -> u64 {
    let y = w & LOW7;
    let hash = !(y ^ (LO * b'#' as u64)).wrapping_add(LO * 0x7f);
    (!y.wrapping_add(LO * 0x5f) | y.wrapping_add(LO) | w | hash) & HI
}

/// Mask of bytes that are not `[A-Za-z0-9-]`: the characters nearly every field name is made
/// of. Letters: `y | 0x20` in `0x61..=0x7a`; digits: `y` in `0x30..=0x39`; then `-`; bytes
/// with the high bit set are flagged through `w`.
#[inline(always)]
const fn not_alnum_dash_mask(w: u64) -> u64 {
    let y = w & LOW7;
    let l = y | (LO * 0x20);
    let letter = l.wrapping_add(LO * 0x1f) & !l.wrapping_add(LO * 0x05);
    let digit = y.wrapping_add(LO * 0x50) & !y.wrapping_add(LO * 0x46);
    let dash = !(y ^ (LO * b'-' as u64)).wrapping_add(LO * 0x7f);
    (!(letter | digit | dash) | w) & HI
}

/// Mask of the bytes equal to `b` (ASCII): a 7-bit lane that is zero after `^ b` is the only
/// one that adding 0x7f leaves below its high bit; `w`'s own high bit rules out `b | 0x80`.
#[inline(always)]
const fn eq_mask(w: u64, b: u8) -> u64 {
    let y = (w & LOW7) ^ (LO * b as u64);
    !y.wrapping_add(LO * 0x7f) & !w & HI
}

/// First index at or after `i` whose byte is flagged by `mask` (a SWAR classifier) or by
/// `stop` (the same classifier, one byte at a time), or `buf.len()`.
#[inline(always)]
fn find_first(
    buf: &[u8],
    mut i: usize,
    mask: impl Fn(u64) -> u64,
    stop: impl Fn(u8) -> bool,
) -> usize {
    // Two words per iteration: one branch per 16 bytes, and the two masks are independent.
    while let Some(c) = buf.get(i..).and_then(|s| s.first_chunk::<16>()) {
        let x = u128::from_le_bytes(*c);
        let (ma, mb) = (mask(x as u64), mask((x >> 64) as u64));
        if ma != 0 {
            return i + (ma.trailing_zeros() / 8) as usize;
        }
        if mb != 0 {
            return i + 8 + (mb.trailing_zeros() / 8) as usize;
        }
        i += 16;
    }
    if let Some(c) = buf.get(i..).and_then(|s| s.first_chunk::<8>()) {
        let m = mask(word(c));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = buf.get(i) {
        if stop(b) {
            return i;
        }
        i += 1;
    }
    buf.len()
}

/// Index of the first control byte (`< 0x20`, which includes HTAB, CR and LF) or DEL at or
/// after `i`, or `buf.len()`. This is the field-value scan: everything else (SP, VCHAR,
/// obs-text) is field content (RFC 9110 §5.5), so the caller only looks at the byte it returns.
#[inline(always)]
pub(crate) fn find_ctl(buf: &[u8], i: usize) -> usize {
    find_first(buf, i, ctl_mask, |b| b < 0x20 || b == 0x7f)
}

/// Where a field value ends, given `stop`, the first control byte or DEL a scan found: `stop`
/// itself, unless it is an HTAB (the one control a value may hold), in which case the next
/// such byte `find(k)` finds from `k` on, and so on. Every scanner's value search ends here,
/// so the HTAB rule is written once.
#[inline(always)]
pub(crate) fn past_tabs(
    buf: &[u8],
    mut stop: usize,
    mut find: impl FnMut(usize) -> usize,
) -> usize {
    while buf.get(stop) == Some(&b'\t') {
        stop = find(stop + 1);
    }
    stop
}

/// Index of the first byte at or after `i` that is not VCHAR or is `#`, or `buf.len()`. This
/// is the request-target scan: the target ends at SP, and any other non-VCHAR byte (controls,
/// DEL, obs-text) is invalid in a URI (RFC 3986 §2, RFC 9112 §3.2). So is `#`: a fragment is
/// never sent (RFC 9110 §7.1), and none of the four target forms has one (RFC 9112 §3.2).
#[inline(always)]
pub(crate) fn find_non_target(buf: &[u8], i: usize) -> usize {
    find_first(buf, i, non_target_mask, is_non_target)
}

/// The byte-at-a-time definition of [`find_non_target`]'s stop.
#[inline(always)]
fn is_non_target(b: u8) -> bool {
    !(0x21..=0x7e).contains(&b) || b == b'#'
}

/// Index of the first byte at or after `i` that is not `[A-Za-z0-9-]`, or `buf.len()`.
#[inline(always)]
pub(crate) fn find_not_alnum_dash(buf: &[u8], i: usize) -> usize {
    find_first(buf, i, not_alnum_dash_mask, |b| {
        !(b.is_ascii_alphanumeric() || b == b'-')
    })
}

/// Index of the first non-`tchar` byte at or after `i`, or `buf.len()`: the field-name scan
/// (the byte found must be `:`). The portable backend's, and the reference of the SSE2 one
/// (`crate::simd::scan_line_start`, then `crate::simd::find_name_end` past a rarer `tchar`).
///
/// A SWAR pass skips letters, digits and `-` 8 bytes at a time; any other byte stops it, and
/// if that byte is one of the rarer `tchar`s (``!#$%&'*+.^_`|~``) the scan carries on from
/// there. So the scan both finds the end of the name and validates it.
#[inline(always)]
pub(crate) fn find_name_end(buf: &[u8], i: usize) -> usize {
    find_name_end_with(buf, i, find_not_alnum_dash)
}

/// The field-name scan over any "skip letters, digits and `-`" scanner: the SWAR one above or
/// the SIMD one, which share everything else.
#[inline(always)]
pub(crate) fn find_name_end_with(
    buf: &[u8],
    mut i: usize,
    skip_alnum_dash: impl Fn(&[u8], usize) -> usize,
) -> usize {
    loop {
        i = skip_alnum_dash(buf, i);
        match buf.get(i) {
            // The usual stop: tested first so the table load stays off the common path.
            Some(b':') | None => return i,
            Some(&b) if TCHAR[b as usize] => i += 1,
            Some(_) => return i,
        }
    }
}

/// Whether `s` is a token (RFC 9110 §5.6.2): one or more `tchar`s.
#[inline]
pub(crate) fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| TCHAR[b as usize])
}

/// Index of the first byte at or after `i` that `table` does not hold, or `buf.len()`: the
/// scan for short runs (methods, Host values), a plain table loop.
#[inline(always)]
fn find_not_in(table: &[bool; 256], buf: &[u8], mut i: usize) -> usize {
    while let Some(&b) = buf.get(i) {
        if !table[b as usize] {
            return i;
        }
        i += 1;
    }
    buf.len()
}

/// Index of the first non-`tchar` byte at or after `i`, or `buf.len()`: the method scan.
#[inline(always)]
pub(crate) fn find_non_tchar(buf: &[u8], i: usize) -> usize {
    find_not_in(&TCHAR, buf, i)
}

/// Index of the first byte at or after `i` that is not a [`REG_NAME_CHAR`], or `buf.len()`:
/// the portable Host scan.
#[inline(always)]
pub(crate) fn find_non_reg_name(buf: &[u8], i: usize) -> usize {
    find_not_in(&REG_NAME_CHAR, buf, i)
}

/// Index of the first `b` (an ASCII byte) at or after `i`, or `buf.len()`: `?` in a target.
#[inline(always)]
pub(crate) fn find_byte(buf: &[u8], i: usize, b: u8) -> usize {
    debug_assert!(b.is_ascii());
    find_first(buf, i, |w| eq_mask(w, b), |x| x == b)
}

/// The 8 bytes at `at` as a little-endian word, or 0 when fewer remain.
#[inline(always)]
pub(crate) fn load8(b: &[u8], at: usize) -> u64 {
    match b.get(at..).and_then(|s| s.first_chunk::<8>()) {
        Some(c) => u64::from_le_bytes(*c),
        None => 0,
    }
}

/// The 4 bytes at `at` as a little-endian word, or 0 when fewer remain.
#[inline(always)]
pub(crate) fn load4(b: &[u8], at: usize) -> u64 {
    match b.get(at..).and_then(|s| s.first_chunk::<4>()) {
        Some(c) => u64::from(u32::from_le_bytes(*c)),
        None => 0,
    }
}

/// ASCII case-insensitive comparison of a field value (or part of one) with a lowercase
/// literal made of letters, digits and `-`, a word at a time.
///
/// Folding with `| 0x20` is exact here because the value scan already rejected every control
/// byte but HTAB, and no byte `>= 0x20` (nor HTAB, which folds to `)`) folds onto a letter,
/// digit or `-` unless it is that character or its uppercase form.
#[inline(always)]
pub(crate) fn eq_fold(v: &[u8], lower: &[u8]) -> bool {
    const F: u64 = 0x2020_2020_2020_2020;
    let n = lower.len();
    if v.len() != n {
        return false;
    }
    // Literals are 4..=16 bytes: two overlapping loads cover them (the first and last 8, or 4).
    debug_assert!(n <= 16, "eq_fold literal longer than 16 bytes");
    if (8..=16).contains(&n) {
        (load8(v, 0) | F == load8(lower, 0)) & (load8(v, n - 8) | F == load8(lower, n - 8))
    } else if n >= 4 {
        const F4: u64 = 0x2020_2020;
        (load4(v, 0) | F4 == load4(lower, 0)) & (load4(v, n - 4) | F4 == load4(lower, n - 4))
    } else {
        v.iter().zip(lower).all(|(&a, &b)| a | 0x20 == b)
    }
}

/// Where `s` lies without its leading and trailing optional whitespace (SP / HTAB, RFC 9110
/// §5.6.3): `(start, end)`, with `start == end` when `s` is all whitespace.
#[inline]
pub(crate) fn ows_bounds(s: &[u8]) -> (usize, usize) {
    let is_ows = |b: &u8| matches!(b, b' ' | b'\t');
    let start = s.iter().position(|b| !is_ows(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !is_ows(b)).map_or(start, |k| k + 1);
    (start, end)
}

/// Trims optional whitespace (SP / HTAB, RFC 9110 §5.6.3) from both ends.
#[inline]
pub(crate) fn trim_ows(s: &[u8]) -> &[u8] {
    let (start, end) = ows_bounds(s);
    s.get(start..end).unwrap_or_default()
}

/// Splits a comma-separated list value into trimmed, non-empty elements (RFC 9110 §5.6.1:
/// recipients must accept and ignore empty elements).
#[inline]
pub(crate) fn list_elements(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v.split(|&b| b == b',')
        .map(trim_ows)
        .filter(|e| !e.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_scans_agree_with_bytewise_definition() {
        // Every byte value at every position of a 40-byte buffer, plus a clean buffer.
        for pos in 0..40 {
            for b in 0..=255u8 {
                let mut buf = vec![b'a'; 40];
                buf[pos] = b;
                let ctl = b < 0x20 || b == 0x7f;
                assert_eq!(find_ctl(&buf, 0), if ctl { pos } else { 40 });
                let non_target = !(0x21..=0x7e).contains(&b) || b == b'#';
                assert_eq!(find_non_target(&buf, 0), if non_target { pos } else { 40 });
                let nont = !TCHAR[b as usize];
                assert_eq!(find_non_tchar(&buf, 0), if nont { pos } else { 40 });
                assert_eq!(find_byte(&buf, 0, b'?'), if b == b'?' { pos } else { 40 });
                assert_eq!(find_name_end(&buf, 0), if nont { pos } else { 40 });
                buf[pos.saturating_sub(1)] = b'_';
                assert_eq!(
                    find_name_end(&buf, 0),
                    if nont && pos > 0 { pos } else { 40 }
                );
            }
        }
        // The first flagged byte is exact even with other flagged bytes after it.
        let q = b"/a?b?c\xbf??\x3f";
        for len in 0..=q.len() {
            let want = q[..len].iter().position(|&b| b == b'?').unwrap_or(len);
            assert_eq!(find_byte(&q[..len], 0, b'?'), want);
        }
        let buf = [0x00, 0x20, 0x21, 0x1f, 0x7f, b'a', b'b', b'c'];
        assert_eq!(find_ctl(&buf, 0), 0);
        assert_eq!(find_ctl(&buf, 1), 3);
        for w in [0u64, u64::MAX, 0x7f20_1f00_ff80_3a21, 0x2020_2020_2020_2020] {
            let bytes = w.to_le_bytes();
            let first_ctl = bytes.iter().position(|&b| b < 0x20 || b == 0x7f);
            let m = ctl_mask(w);
            assert_eq!(
                first_ctl,
                (m != 0).then(|| (m.trailing_zeros() / 8) as usize)
            );
        }
    }

    #[test]
    fn eq_fold_matches_eq_ignore_ascii_case_on_field_bytes() {
        let words: [&[u8]; 6] = [
            b"keep-alive",
            b"close",
            b"upgrade",
            b"chunked",
            b"100-continue",
            b"a",
        ];
        for lower in words {
            for v in [
                lower.to_vec(),
                lower.to_ascii_uppercase(),
                b"keep-alivx".to_vec(),
                b"Close".to_vec(),
                b"c\tose".to_vec(),
                b"".to_vec(),
            ] {
                assert_eq!(
                    eq_fold(&v, lower),
                    v.eq_ignore_ascii_case(lower),
                    "{v:?} {lower:?}"
                );
            }
        }
    }

    #[test]
    fn ows_and_lists() {
        assert_eq!(trim_ows(b" \t a b \t"), b"a b");
        assert_eq!(trim_ows(b"  "), b"");
        let v: Vec<&[u8]> = list_elements(b" ,a , ,b,").collect();
        assert_eq!(v, vec![&b"a"[..], b"b"]);
    }
}
