//! bufslab-tls's record layer: one TLS 1.3 record sealed in place and opened in place, per
//! suite and record size, on the crypto library the build uses (`ring`; AWS-LC with the
//! `aws-lc-rs` feature). Run it once each way to compare the two:
//!
//! ```text
//! taskset -c 1 cargo bench -p bufslab-benches --bench tls_record
//! taskset -c 1 cargo bench -p bufslab-benches --features aws-lc-rs --bench tls_record
//! ```

use std::hint::black_box;

use bufslab_tls::record::{sealed_len, Opener, Sealer, Suite, HEADER_LEN};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// A keep-alive request or response, a kilobyte, and a full record.
const SIZES: [usize; 3] = [100, 1024, 16 * 1024];

fn records(c: &mut Criterion) {
    let library = bufslab_tls::CRYPTO_LIBRARY;
    for suite in [Suite::Aes128Gcm, Suite::Aes256Gcm, Suite::Chacha20Poly1305] {
        let mut g = c.benchmark_group(format!("tls_record/{}", suite.name()));
        for len in SIZES {
            let key = vec![7u8; suite.key_len()];
            let mut sealer = Sealer::new(suite, &key, [9; 12], 0).expect("a valid key");
            let mut opener = Opener::new(suite, &key, [9; 12], 0).expect("a valid key");
            // Sealing and opening in turn keeps the two sequence numbers together; at the
            // AES-GCM record limit both take a new key, as a KeyUpdate would give them.
            let mut buf = vec![b'a'; sealed_len(len, 0)];
            g.throughput(Throughput::Bytes(len as u64));
            g.bench_function(format!("{library}/seal+open/{len}"), |b| {
                b.iter(|| {
                    if sealer.key_update_due() {
                        sealer.rekey(&key, [9; 12]).expect("a valid key");
                        opener.rekey(&key, [9; 12]).expect("a valid key");
                    }
                    buf[HEADER_LEN..HEADER_LEN + len].fill(b'a');
                    let n = sealer.seal_in_place(&mut buf, len, 0).expect("sealed");
                    let opened = opener.open_in_place(&mut buf[..n]).expect("opened");
                    black_box(opened.plaintext.len())
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, records);
criterion_main!(benches);
