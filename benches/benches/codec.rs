//! Head parsing against httparse and picohttpparser on the same fixtures, in the same run,
//! plus response encoding.
//!
//! Run: `cargo bench -p bufslab-benches --bench codec -- --warm-up-time 1 --measurement-time 3`
//! (pin with `taskset -c N` on a shared machine). The contenders and the fixtures are in
//! `src/contenders.rs`; `codec_interleaved` times the same contenders in turn, for steadier ratios on a
//! machine whose speed drifts.

use std::hint::black_box;

use bufslab_http::{DateCache, KnownHeader, ResponseHead};
use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use bufslab_benches::{backends, fixtures, Contenders};

fn parse_benches(c: &mut Criterion) {
    let mut contenders = Contenders::new();
    for (name, buf, n) in fixtures() {
        let mut g = c.benchmark_group(format!("parse/{name}"));
        g.throughput(Throughput::Elements(n as u64));
        let c = &mut contenders;
        for (k, backend) in backends().into_iter().enumerate() {
            g.bench_function(format!("bufslab-{backend}"), |b| {
                b.iter(|| c.bufslab(k, buf, n))
            });
        }
        g.bench_function("httparse", |b| b.iter(|| c.httparse(buf, n)));
        g.bench_function("pico", |b| b.iter(|| c.pico(buf, n)));
        g.finish();
    }
}

fn encode_benches(c: &mut Criterion) {
    let date = DateCache::new(std::time::SystemTime::now());
    let mut out = BytesMut::with_capacity(4096);
    // The TechEmpower plaintext response, built header by header from precomputed constants.
    c.bench_function("encode/plaintext_builder", |b| {
        b.iter(|| {
            out.clear();
            ResponseHead::new(&mut out, 200)
                .static_header(KnownHeader::Server, b"bufslab")
                .static_header(KnownHeader::ContentType, b"text/plain")
                .content_length(black_box(13))
                .date(black_box(&date))
                .finish();
            out.extend_from_slice(b"Hello, World!");
            black_box(out.len())
        })
    });
    // The same bytes from a prefix precomputed once (status line + static headers), then
    // Content-Length, Date and the end of the head.
    let mut prefix = Vec::new();
    let _ = ResponseHead::new(&mut prefix, 200)
        .static_header(KnownHeader::Server, b"bufslab")
        .static_header(KnownHeader::ContentType, b"text/plain");
    c.bench_function("encode/plaintext_prefix", |b| {
        b.iter(|| {
            out.clear();
            ResponseHead::from_prefix(&mut out, black_box(&prefix))
                .finish_with_length(black_box(13), black_box(&date));
            out.extend_from_slice(b"Hello, World!");
            black_box(out.len())
        })
    });
}

criterion_group!(benches, parse_benches, encode_benches);
criterion_main!(benches);
