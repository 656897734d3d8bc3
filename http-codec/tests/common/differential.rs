//! What the two differential tests (requests, responses) share: the generated corpus, the
//! sorting of two parsers' verdicts on one input into the cases they count, and the checks
//! that do not depend on the kind of message.
#![allow(dead_code)]

use std::fmt::Debug;

use bufslab_http::{Error, Version};

use crate::common::Rng;

/// What ours and httparse said about one input.
pub enum Case<'a, O, T, E> {
    /// Both parsed a complete head: the fields must agree.
    BothAccept(&'a O, &'a T),
    BothPartial,
    BothReject,
    /// Ours rejects what httparse accepts: a deliberate difference.
    OursRejects(Error),
    /// Ours rejects what httparse has not decided yet: a deliberate difference, found earlier.
    OursEarly(Error),
    /// Ours has not decided what httparse rejects: see [`still_rejected`].
    TheirsEarly(&'a E),
    /// Ours accepts what httparse rejects.
    TheirsRejects(&'a O, &'a E),
    /// One says complete, the other partial: never expected.
    Mismatch,
}

/// The case of one input.
pub fn case<'a, O, T, E>(
    ours: &'a Result<Option<O>, Error>,
    theirs: &'a Result<Option<T>, E>,
) -> Case<'a, O, T, E> {
    match (ours, theirs) {
        (Ok(Some(o)), Ok(Some(t))) => Case::BothAccept(o, t),
        (Ok(None), Ok(None)) => Case::BothPartial,
        (Err(_), Err(_)) => Case::BothReject,
        (Err(e), Ok(Some(_))) => Case::OursRejects(*e),
        (Err(e), Ok(None)) => Case::OursEarly(*e),
        (Ok(None), Err(e)) => Case::TheirsEarly(e),
        (Ok(Some(o)), Err(e)) => Case::TheirsRejects(o, e),
        (Ok(Some(_)), Ok(None)) | (Ok(None), Ok(Some(_))) => Case::Mismatch,
    }
}

/// How often each case came up over a corpus.
#[derive(Debug, Default)]
pub struct Tally {
    pub both_accept: usize,
    pub both_partial: usize,
    pub both_reject: usize,
    pub ours_rejects: usize,
    pub ours_early: usize,
    pub theirs_early: usize,
    pub theirs_rejects: usize,
}

impl Tally {
    pub fn count<O, T, E>(&mut self, case: &Case<'_, O, T, E>) {
        let n = match case {
            Case::BothAccept(..) => &mut self.both_accept,
            Case::BothPartial => &mut self.both_partial,
            Case::BothReject => &mut self.both_reject,
            Case::OursRejects(_) => &mut self.ours_rejects,
            Case::OursEarly(_) => &mut self.ours_early,
            Case::TheirsEarly(_) => &mut self.theirs_early,
            Case::TheirsRejects(..) => &mut self.theirs_rejects,
            Case::Mismatch => return,
        };
        *n += 1;
    }
}

/// Calls `check` on `n` inputs generated from `seed`: the even ones by `valid`, the odd ones by
/// `mutated`.
pub fn corpus(
    seed: u64,
    n: usize,
    valid: fn(&mut Rng) -> Vec<u8>,
    mutated: fn(&mut Rng) -> Vec<u8>,
    mut check: impl FnMut(&[u8]),
) {
    let mut rng = Rng(seed);
    for i in 0..n {
        let buf = if i % 2 == 0 {
            valid(&mut rng)
        } else {
            mutated(&mut rng)
        };
        check(&buf);
    }
}

/// Field lines as our summaries hold them: (classified name, raw name, value).
pub type OurFields = [(Vec<u8>, Vec<u8>, Vec<u8>)];

/// Field lines as the tests' owned copy of httparse's result holds them: (name, value).
pub type TheirFields = [(Vec<u8>, Vec<u8>)];

/// For [`Case::BothAccept`]: the version, the head's length and its field lines (raw name and
/// value) agree.
pub fn same_head(
    buf: &[u8],
    ours: (Version, usize, &OurFields),
    theirs: (u8, usize, &TheirFields),
) {
    let show = String::from_utf8_lossy(buf);
    let minor = match ours.0 {
        Version::Http10 => 0,
        Version::Http11 => 1,
    };
    assert_eq!((minor, ours.1), (theirs.0, theirs.1), "{show}");
    let fields: Vec<(Vec<u8>, Vec<u8>)> = ours
        .2
        .iter()
        .map(|(_, raw, v)| (raw.clone(), v.clone()))
        .collect();
    assert_eq!(fields, theirs.2, "{show}");
}

/// For [`Case::OursRejects`] and [`Case::OursEarly`]: `why`, the deliberate difference that
/// explains ours rejecting `buf` with `e` where httparse said `theirs`, must exist.
pub fn explained(
    why: Option<&'static str>,
    e: Error,
    theirs: &impl Debug,
    buf: &[u8],
) -> &'static str {
    why.unwrap_or_else(|| {
        panic!(
            "ours rejects ({e:?}), httparse {theirs:?}: {:?}",
            String::from_utf8_lossy(buf)
        )
    })
}

/// For [`Case::TheirsEarly`]: httparse rejects early what ours cannot judge yet (an impossible
/// version prefix, bytes it reads differently); once the head is complete, ours must reject it
/// too.
pub fn still_rejected(buf: &[u8], accepts: impl Fn(&[u8]) -> bool, theirs: &impl Debug) {
    let mut done = buf.to_vec();
    done.extend_from_slice(b"\r\n\r\n");
    assert!(
        !accepts(&done),
        "httparse rejects ({theirs:?}) what we would accept: {:?}",
        String::from_utf8_lossy(buf)
    );
}

/// With bare LF allowed, the bare-LF difference disappears: over `n` valid messages with
/// their CRs removed, both parsers agree on the verdict and, when complete, on
/// `(head length, field lines)`, which `ours` and `theirs` return.
pub fn lenient_agrees<E: Debug>(
    seed: u64,
    valid: fn(&mut Rng) -> Vec<u8>,
    ours: impl Fn(&[u8]) -> Result<Option<(usize, usize)>, Error>,
    theirs: impl Fn(&[u8]) -> Result<Option<(usize, usize)>, E>,
) {
    let mut rng = Rng(seed);
    for _ in 0..2000 {
        let buf: Vec<u8> = valid(&mut rng)
            .into_iter()
            .filter(|&b| b != b'\r')
            .collect();
        match (ours(&buf), theirs(&buf)) {
            (Ok(Some(o)), Ok(Some(t))) => assert_eq!(o, t),
            (Ok(None), Ok(None)) => {}
            // The rules httparse does not have (framing fields, Host) still reject.
            (Err(_), Ok(Some(_))) => {}
            other => panic!("{other:?} {:?}", String::from_utf8_lossy(&buf)),
        }
    }
}
