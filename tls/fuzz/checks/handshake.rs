//! The handshake target's check: the input (after a mode byte) is what a client sends,
//! delivered to a `Handshake` in chunks of the size the mode byte says (0: all at once), with
//! an outgoing buffer barely over the minimum.
//!
//! Asserts: no panic (in the driver or in rustls beneath it, whose debug assertions are on in
//! fuzzing builds); `consumed` and `written` stay within their buffers; after a failure every
//! call returns that failure and moves nothing; the driver never loops without progress.
//!
//! `cert.der` and `key.der` are a self-signed test certificate for `localhost` and its key,
//! made for this target and used nowhere else.

use std::sync::OnceLock;

use bufslab_tls::record::MAX_RECORD_LEN;
use bufslab_tls::{Config, Error, Handshake, Status};
use rustls::pki_types::{CertificateDer, PrivatePkcs8KeyDer};

static CERT: &[u8] = include_bytes!("cert.der");
static KEY: &[u8] = include_bytes!("key.der");

fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        Config::with_single_cert(
            vec![CertificateDer::from(CERT.to_vec())],
            PrivatePkcs8KeyDer::from(KEY.to_vec()).into(),
        )
        .expect("the test certificate")
    })
}

pub fn check(data: &[u8]) {
    let Some((&mode, input)) = data.split_first() else {
        return;
    };
    let chunk = if mode == 0 {
        usize::MAX
    } else {
        usize::from(mode)
    };
    let mut hs = Handshake::new(config()).expect("a handshake");
    let mut rx = Vec::new();
    let mut out = vec![0u8; MAX_RECORD_LEN + 100];
    let mut fed = 0;
    let mut failed: Option<Error> = None;
    // Each turn either takes new input or returns with the input all in: bounded.
    for _ in 0..input.len() + 8 {
        let n = (input.len() - fed).min(chunk);
        rx.extend_from_slice(&input[fed..fed + n]);
        fed += n;
        let before = rx.len();
        let progress = hs.advance(&mut rx, &mut out);
        assert!(progress.consumed <= before);
        assert!(progress.written <= out.len());
        if let Some(e) = &failed {
            assert_eq!(progress.status.as_ref().err(), Some(e));
            assert_eq!((progress.consumed, progress.written), (0, 0));
            return;
        }
        rx.drain(..progress.consumed);
        match progress.status {
            Err(e) => {
                assert!(!e.to_string().is_empty());
                // Once more, to see it stays failed.
                failed = Some(e);
            }
            Ok(Status::Done) => {
                // Out of a fuzzer's reach (it would need the client's keys); checked anyway.
                assert!(hs.into_connection().is_ok());
                return;
            }
            Ok(Status::FlushOutput) => assert!(progress.written > 0),
            Ok(Status::NeedInput) if fed == input.len() => return,
            Ok(_) => {}
        }
    }
    panic!("the handshake neither finished, failed nor asked for input");
}
