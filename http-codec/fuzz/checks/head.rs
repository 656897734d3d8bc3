//! Head parser: no input panics, and feeding the input in pieces (every byte, or at split
//! points chosen by the input) gives exactly the whole-buffer result. A complete head is then
//! walked (every accessor) and its body decoded.

use bufslab_http::{BodyDecoder, Error, HeaderSlot, Parser, Status, TargetForm};

// The integration tests' owned summary of a parse and their feeding of growing prefixes, so
// both compare the same fields in the same way.
#[path = "../../tests/common/mod.rs"]
mod common;
use common::{feed, summarize, Summary};
mod split;
use split::Run;

fn run(r: &Run<'_>) -> Result<Option<Summary>, Error> {
    let (cfg, buf) = (r.cfg, r.buf);
    let mut storage = vec![HeaderSlot::EMPTY; r.slots];
    let mut p = Parser::new(cfg);
    feed(buf, r.cuts, |prefix| {
        match p.parse(prefix, &mut storage)? {
            Status::Complete(r) => {
                let s = summarize(&r);
                assert!(s.head_len <= buf.len());
                let (path, query) = (r.path(), r.query());
                if r.target_form() == TargetForm::Absolute {
                    // The path and query are the target's tail (or `/` for an empty path),
                    // after the authority, which is a valid `uri-host [ ":" port ]`.
                    let t = r.target().as_ptr_range();
                    let inside = |s: &[u8]| {
                        let s = s.as_ptr_range();
                        t.start <= s.start && s.end <= t.end
                    };
                    assert!(path == b"/" || inside(path));
                    assert!(query.map_or(true, inside));
                    if let Some(a) = r.authority() {
                        assert!(inside(a) && path.starts_with(b"/"));
                        assert!(!a.contains(&b'@') && !a.contains(&b'/') && !a.contains(&b'?'));
                    }
                } else {
                    assert_eq!(
                        path.len() + query.map_or(0, |q| q.len() + 1),
                        r.target().len()
                    );
                }
                // Decode (or skip) whatever body follows; must not panic either way.
                let mut body = BodyDecoder::with_config(r.framing(), &cfg);
                let _ = body.skip(&buf[s.head_len..]);
                Ok(Some(s))
            }
            Status::Partial => Ok(None),
        }
    })
}

/// The target's body: panics where `data` breaks a rule above.
pub fn check(data: &[u8]) {
    split::split_independent(data, &[400, 414, 417, 431, 501, 505], run);
}
