//! Head parser: no input panics, and feeding the input in pieces (every byte, or at split
//! points chosen by the input) gives exactly the whole-buffer result. A complete head is then
//! walked (every accessor) and its body decoded.
#![no_main]

use bufslab_http::{BodyDecoder, Config, Error, HeaderSlot, Parser, Status, TargetForm};
use libfuzzer_sys::fuzz_target;

// The integration tests' owned summary of a parse, so both compare the same fields.
#[path = "../../tests/common/mod.rs"]
mod common;
use common::{summarize, Summary};

fn run(cfg: Config, buf: &[u8], cuts: &[usize], slots: usize) -> Result<Option<Summary>, Error> {
    let mut storage = vec![HeaderSlot::EMPTY; slots];
    let mut p = Parser::new(cfg);
    for &k in cuts.iter().chain(std::iter::once(&buf.len())) {
        match p.parse(&buf[..k.min(buf.len())], &mut storage)? {
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
                return Ok(Some(s));
            }
            Status::Partial => {}
        }
    }
    Ok(None)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, buf)) = data.split_first() else {
        return;
    };
    let cfg = Config::DEFAULT
        .with_allow_bare_lf(mode & 1 != 0)
        .with_max_head_bytes(if mode & 2 != 0 {
            64 + (mode as usize) * 4
        } else {
            16 * 1024
        })
        .with_max_request_line(if mode & 4 != 0 {
            8 + (mode as usize)
        } else {
            8 * 1024
        })
        .with_max_headers(if mode & 8 != 0 { 3 } else { 100 });
    let slots = if mode & 16 != 0 { 2 } else { 64 };
    let want = run(cfg, buf, &[], slots);
    if let Err(e) = want {
        assert!(matches!(e.status(), 400 | 414 | 417 | 431 | 501 | 505));
        assert!(!e.to_string().is_empty());
    }
    // Every prefix in turn (bounded, to keep executions fast).
    if buf.len() <= 1024 {
        let every: Vec<usize> = (0..buf.len()).collect();
        assert_eq!(run(cfg, buf, &every, slots), want);
    }
    // Two split points taken from the input.
    let a = (mode as usize * 7) % (buf.len() + 1);
    let b = (a + buf.len() / 3) % (buf.len() + 1);
    let mut two = [a, b];
    two.sort_unstable();
    assert_eq!(run(cfg, buf, &two, slots), want);
});
