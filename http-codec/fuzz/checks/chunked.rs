//! Chunked decoder: no input panics or loops, the result does not depend on how the input is
//! split, data slices come from the input and never exceed it, `skip` agrees with `decode`,
//! and without limits the verdict (body, end, incomplete or invalid) is the reference
//! recogniser's (`tests/common/chunked_ref.rs`, the grammar written as recursive descent).

use bufslab_http::{ChunkedDecoder, Config, Error};

#[path = "../../tests/common/chunked_ref.rs"]
mod chunked_ref;
use chunked_ref::{recognise, Verdict};

fn decode(input: &[u8], cuts: &[usize], cfg: &Config) -> Result<(Vec<u8>, usize, bool), Error> {
    let mut dec = ChunkedDecoder::with_config(cfg);
    let mut body = Vec::new();
    let mut pos = 0;
    for &end in cuts.iter().chain(std::iter::once(&input.len())) {
        let end = end.clamp(pos, input.len());
        loop {
            let step = dec.decode(&input[pos..end])?;
            assert!(step.consumed <= end - pos);
            assert!(step.data.len() <= step.consumed);
            body.extend_from_slice(step.data);
            pos += step.consumed;
            if step.done {
                assert!(dec.is_done());
                return Ok((body, pos, true));
            }
            if step.consumed == 0 {
                break;
            }
        }
    }
    Ok((body, pos, false))
}

/// The target's body: panics where `data` breaks a rule above.
pub fn check(data: &[u8]) {
    let Some((&mode, input)) = data.split_first() else {
        return;
    };
    let unlimited = mode & 2 != 0;
    let cfg = if unlimited {
        Config::DEFAULT
            .with_max_chunk_extension_bytes(u64::MAX)
            .with_max_trailer_bytes(u64::MAX)
    } else if mode & 1 != 0 {
        Config::DEFAULT
            .with_max_chunk_extension_bytes(16)
            .with_max_trailer_bytes(16)
    } else {
        Config::DEFAULT
    };
    let want = decode(input, &[], &cfg);
    if input.len() <= 2048 {
        let every: Vec<usize> = (0..input.len()).collect();
        assert_eq!(decode(input, &every, &cfg), want);
    }
    let k = (mode as usize * 13) % (input.len() + 1);
    assert_eq!(decode(input, &[k, k + 3], &cfg), want);
    if let Ok((body, used, done)) = &want {
        assert!(body.len() <= *used);
        let mut dec = ChunkedDecoder::with_config(&cfg);
        assert_eq!(dec.skip(input), Ok((*used, *done)));
    }
    if unlimited {
        let got = match &want {
            Ok((body, used, true)) => Verdict::Done {
                body: body.clone(),
                consumed: *used,
            },
            Ok((_, _, false)) => Verdict::Incomplete,
            Err(_) => Verdict::Invalid,
        };
        assert_eq!(got, recognise(input));
    }
}
