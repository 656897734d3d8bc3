//! Parsing a response head and decoding its chunked body allocate nothing, counted by dhat.
//! dhat counts every thread of the process and allows one profiler at a time, so this file
//! holds a single test.
//!
//! The file is its own `main` (`harness = false`): libtest's main thread goes on allocating
//! (recording and announcing the test) after it starts the test's thread, and on a loaded
//! machine those few blocks land inside the measured window, where dhat cannot tell them from
//! the parser's.

use bufslab_http::{BodyDecoder, HeaderSlot, KnownHeader, Method, ResponseParser, Status};

#[cfg(not(miri))]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() {
    // dhat's counting allocator does not run under Miri.
    if cfg!(miri) {
        return;
    }
    parsing_and_decoding_a_response_allocate_nothing();
    println!("test parsing_and_decoding_a_response_allocate_nothing ... ok");
}

fn parsing_and_decoding_a_response_allocate_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let wire: &[u8] = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Type: text/plain\r\n\
                        Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n\
                        5\r\nhello\r\n0\r\nTrailer: t\r\n\r\n";
    let mut slots = [HeaderSlot::EMPTY; 16];
    let mut parser = ResponseParser::default();
    let before = dhat::HeapStats::get().total_blocks;
    let mut total = 0;
    for cut in [10, 40, wire.len()] {
        if let Status::Complete(r) = parser.parse(&wire[..cut], Method::Get, &mut slots).unwrap() {
            assert_eq!(r.get(KnownHeader::Server), Some(&b"x"[..]));
            let mut body = BodyDecoder::for_response(r.framing(), parser.config());
            let mut at = r.head_len();
            loop {
                let step = body.decode(&wire[at..]).unwrap();
                total += step.data.len();
                at += step.consumed;
                if step.done {
                    break;
                }
            }
        }
    }
    let after = dhat::HeapStats::get().total_blocks;
    assert_eq!((after - before, total), (0, 5));
}
