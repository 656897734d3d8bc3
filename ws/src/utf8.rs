//! UTF-8 validation of a text message that arrives in pieces.

use simdutf8::compat::from_utf8;

/// Validates a byte stream piece by piece, carrying an incomplete code point (at most 3 bytes)
/// from one piece to the next: a text message is checked as it arrives, across frames and
/// buffers, with no copy of the message.
///
/// Invalid input is reported in the piece where it becomes certain: an impossible byte at
/// once, an incomplete code point at [`Utf8Validator::finish`].
///
/// # Examples
///
/// ```
/// use bufslab_ws::Utf8Validator;
///
/// let text = "façade ✓".as_bytes();
/// let mut v = Utf8Validator::new();
/// for byte in text {
///     v.feed(std::slice::from_ref(byte))?; // every code point split
/// }
/// v.finish()?;
///
/// let mut v = Utf8Validator::new();
/// v.feed(&[0xe2, 0x9c])?; // the start of ✓: fine so far
/// assert!(v.finish().is_err()); // but the message ended there
/// # Ok::<(), bufslab_ws::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Utf8Validator {
    partial: [u8; 4],
    len: u8,
}

impl Utf8Validator {
    /// A validator at the start of a message.
    pub const fn new() -> Utf8Validator {
        Utf8Validator {
            partial: [0; 4],
            len: 0,
        }
    }

    /// Checks the next piece; [`Error::InvalidUtf8`](crate::Error::InvalidUtf8) when the
    /// stream so far cannot be the start of valid UTF-8.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), crate::Error> {
        let held = usize::from(self.len);
        if held > 0 {
            // std accepted the held bytes as the start of a code point, so the lead byte is
            // C2-F4 and tells the sequence's width.
            let width = match self.partial[0] {
                0xf0.. => 4,
                0xe0.. => 3,
                _ => 2,
            };
            let take = (width - held).min(bytes.len());
            self.partial[held..held + take].copy_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            let now = held + take;
            match from_utf8(&self.partial[..now]) {
                Ok(_) => self.len = 0,
                Err(e) if e.error_len().is_none() => {
                    // Still short of the width: this piece is used up.
                    self.len = now as u8;
                    return Ok(());
                }
                Err(_) => return Err(crate::Error::InvalidUtf8),
            }
        }
        match from_utf8(bytes) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() => {
                let tail = &bytes[e.valid_up_to()..];
                self.partial[..tail.len()].copy_from_slice(tail);
                self.len = tail.len() as u8;
                Ok(())
            }
            Err(_) => Err(crate::Error::InvalidUtf8),
        }
    }

    /// Ends the message: an error when it stopped inside a code point. The validator is ready
    /// for the next message either way.
    pub fn finish(&mut self) -> Result<(), crate::Error> {
        let held = std::mem::take(&mut self.len);
        if held == 0 {
            Ok(())
        } else {
            Err(crate::Error::InvalidUtf8)
        }
    }

    /// Whether a code point is open (its first bytes seen, not its last).
    pub const fn is_mid_code_point(&self) -> bool {
        self.len != 0
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Validator;

    /// Whether `pieces` together are valid, through the validator.
    fn valid_in(pieces: &[&[u8]]) -> bool {
        let mut v = Utf8Validator::new();
        pieces.iter().all(|p| v.feed(p).is_ok()) && v.finish().is_ok()
    }

    #[test]
    fn agrees_with_std_at_every_two_and_three_way_split() {
        let samples: &[&[u8]] = &[
            "".as_bytes(),
            "ascii only".as_bytes(),
            "κόσμε – ✓ 𝄞 €".as_bytes(),
            b"\xed\xa0\x80",      // a surrogate
            b"\xf4\x90\x80\x80",  // above U+10FFFF
            b"\xc0\xaf",          // overlong
            b"\xe2\x82",          // truncated
            b"a\xf0\x9f\x98",     // truncated 4-byte
            b"\xf0\x9f\x98\x80z", // a whole emoji
            b"\x80",              // a lone continuation
            b"\xce\xba\xff",      // invalid after valid
            b"\xf5",              // never valid
            b"\xe2\x82\xac\xe2\x82",
        ];
        for s in samples {
            let want = std::str::from_utf8(s).is_ok();
            assert_eq!(valid_in(&[s]), want, "{s:?}");
            for i in 0..=s.len() {
                assert_eq!(valid_in(&[&s[..i], &s[i..]]), want, "{s:?} at {i}");
                for j in i..=s.len() {
                    assert_eq!(
                        valid_in(&[&s[..i], &s[i..j], &s[j..]]),
                        want,
                        "{s:?} {i} {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn fails_at_the_first_impossible_byte() {
        let mut v = Utf8Validator::new();
        v.feed(b"ok \xf0").unwrap();
        assert!(v.is_mid_code_point());
        assert!(v.feed(b"\x41").is_err());
        let mut v = Utf8Validator::new();
        v.feed(b"\xed").unwrap();
        // ED A0 can only start a surrogate: refused before a third byte comes.
        assert!(v.feed(b"\xa0").is_err());
    }
}
