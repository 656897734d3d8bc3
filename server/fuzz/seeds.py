"""The conn fuzz target's seed corpus, one file per case: `python3 fuzz/seeds.py fuzz/seeds/conn`
(from server/). The script format is `bufslab_server::fuzzing`'s (src/fuzzing.rs)."""
import os, sys
out = sys.argv[1]
def send(b, chunk=64):
    r = b''
    for i in range(0, len(b), chunk):
        c = b[i:i+chunk]
        r += bytes([len(c)-1]) + c
    return r
READ = bytes([0x5f])          # read up to 31*64+1
RING = bytes([0x60])
SEND = bytes([0x80])          # send all
def short(n): return bytes([0x80 | n])
TIMER = bytes([0xc0]); ANSWER = bytes([0xc8]); HOG = bytes([0xd0]); UNHOG = bytes([0xd8]); EOF_ = bytes([0xe0]); SHUT = bytes([0xf0]); FAIL = bytes([0xf8])
H = b'Host: a\r\n'
def get(p, v=b'1.1', extra=b''): return b'GET ' + p + b' HTTP/' + v + b'\r\n' + H + extra + b'\r\n'
def echo_cl(body, extra=b'', v=b'1.1'): return b'POST /echo HTTP/' + v + b'\r\n' + H + b'Content-Length: ' + str(len(body)).encode() + b'\r\n' + extra + b'\r\n' + body
def chunked(path, chunks): return b'POST ' + path + b' HTTP/1.1\r\n' + H + b'Transfer-Encoding: chunked\r\n\r\n' + chunks
seeds = {
 'plaintext': send(get(b'/plaintext')) + READ + SEND,
 'pipelined16': send(b''.join(get(p) for p in [b'/plaintext', b'/json', b'/nope', b'/stats'] * 4)) + READ + READ + SEND + SEND,
 'echo_cl_split': send(echo_cl(b'hello world' * 40), 7) + READ + short(3) + READ + short(5) + READ + SEND + READ + SEND,
 'echo_chunked_ring': send(chunked(b'/echo', b'5\r\nhello\r\n6;a=b\r\n world\r\n0\r\n\r\n'), 13) + RING + RING + SEND + RING + SEND,
 'expect_continue': send(echo_cl(b'abcde', b'Expect: 100-continue\r\n').replace(b'abcde', b'')) + READ + SEND + send(b'abcde') + READ + SEND,
 'http10_expect': send(echo_cl(b'abcde', b'Expect: 100-continue\r\n', b'1.0')) + READ + SEND,
 'bad_chunk_zz_echo': send(chunked(b'/echo', b'zz\r\nhello\r\n0\r\n\r\n')) + READ + SEND,
 'bad_chunk_404': send(chunked(b'/nope', b'5 \r\nhello\r\n0\r\n\r\n')) + READ + SEND,
 'bad_chunk_bare_lf': send(chunked(b'/echo', b'5\nhello\n0\n\n')) + READ + SEND,
 'late_fault': send(chunked(b'/echo', b'5\r\nhello\r\n')) + READ + SEND + send(b'5\r\nhelloXX\r\n0\r\n\r\n') + READ + SEND,
 'header_timeout': send(b'GET /plain') + READ + TIMER + SEND,
 'big_head': send(b'GET /plaintext HTTP/1.1\r\n' + b'X-Long: ' + b'a' * 1500 + b'\r\n\r\n') + READ + READ + READ + SEND,
 'absolute_form': send(get(b'http://localhost:8080/plaintext')) + READ + SEND,
 'head_json': send(b'HEAD /json HTTP/1.1\r\n' + H + b'\r\n' + get(b'/plaintext')) + READ + SEND,
 'pool_hog': HOG + send(get(b'/json') + get(b'/plaintext')) + READ + SEND + UNHOG + READ + SEND,
 'shutdown': send(get(b'/plaintext')) + READ + SHUT + SEND + READ,
 'too_large': send(echo_cl(b'x' * 4000)) + READ + SEND,
 'idle_timeout': send(get(b'/json')) + READ + TIMER,
 'send_fail': send(get(b'/json') * 3) + READ + short(10) + FAIL,
 'eof_mid_body': send(echo_cl(b'x' * 100)[:-50]) + READ + EOF_ + SEND + READ,
 'pipelined_then_fault': send(get(b'/plaintext') + chunked(b'/echo', b'5\r\nhello\r\nzz\r\n')) + READ + SEND,
 'chunked_skip_ok': send(chunked(b'/json', b'3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n') + get(b'/plaintext')) + READ + SEND,
 'deferred_pipelined': send(get(b'/defer') + get(b'/plaintext')) + READ + SEND + ANSWER + SEND,
 'deferred_closed_first': send(get(b'/defer')) + READ + TIMER + ANSWER,
 'deferred_deadline_with_input': send(get(b'/defer') + get(b'/plaintext')) + READ + TIMER + SEND + ANSWER + SEND,
 'deferred_http10': send(get(b'/defer', b'1.0')) + READ + ANSWER + SEND,
 'pulled_body': send(get(b'/pull') + get(b'/json')) + READ + short(40) + SEND + SEND + SEND + SEND,
 'pulled_head': send(b'HEAD /pull HTTP/1.1\r\n' + H + b'\r\n') + READ + SEND,
 'service_misuse': send(get(b'/fail') + get(b'/plaintext')) + READ + SEND,
 'options_star': send(b'OPTIONS * HTTP/1.1\r\n' + H + b'\r\n' + get(b'/plaintext')) + READ + SEND,
}
def post(p, body, extra=b'', v=b'1.1'): return b'POST ' + p + b' HTTP/' + v + b'\r\n' + H + b'Content-Length: ' + str(len(body)).encode() + b'\r\n' + extra + b'\r\n' + body
def head(p): return b'HEAD ' + p + b' HTTP/1.1\r\n' + H + b'\r\n'
def sized(route, n): return route + b'/' + str(n).encode()
# Whole bodies of 700 to 4000 bytes, 48 of them pipelined: more than the output queue holds at
# once, so the batch goes out in parts (before the backpressure, a 503 came halfway through).
batch = [700 + (i * 977) % 3301 for i in range(48)]
seeds.update({
 'pipelined_whole_bodies': send(b''.join(get(sized(b'/body', n)) for n in batch)) + RING + SEND + SEND + SEND,
 'pipelined_whole_mixed': send(b''.join(get(sized([b'/body', b'/with', b'/static'][i % 3], n)) for i, n in enumerate(batch[:36]))) + READ + short(50) + READ + SEND + READ + SEND,
 'pipelined_owned': send(b''.join(get(sized([b'/owned/bytes', b'/owned/shared', b'/owned/rent'][i % 3], n)) for i, n in enumerate(batch[:40]))) + RING + short(20) + SEND + SEND,
 'whole_at_limit': send(get(b'/body/32768') + get(b'/with/8032') + get(b'/static/4000') + head(b'/body/32768') + get(b'/body/0')) + READ + short(63) + SEND + SEND,
 'whole_too_large': send(get(b'/body/32769') + get(b'/plaintext')) + READ + SEND,
 'with_too_large': send(head(b'/with/8033') + get(b'/plaintext')) + READ + SEND,
 'whole_http10': send(get(b'/body/5000', b'1.0') + get(b'/owned/bytes/6000', b'1.0')) + READ + SEND,
 'owned_bodies': send(get(b'/owned/bytes/9000') + get(b'/owned/shared/100') + get(b'/owned/shared/4096') + get(b'/owned/rent/0') + get(b'/owned/rent/4096') + head(b'/owned/rent/10') + get(b'/owned/bytes/0')) + READ + short(7) + SEND + short(40) + SEND,
 # The pool truly dry when the service runs (the queue holds the deferred answer's block, the
 # hog everything else; sending the answer frees one block): 503, and the connection closes.
 'whole_pool_dry': send(get(b'/defer') + get(b'/body/30000') + get(b'/plaintext')) + READ + ANSWER + HOG + SEND + UNHOG + SEND,
 'owned_pool_dry': send(get(b'/defer') + get(b'/plaintext') + get(b'/owned/rent/100')) + READ + ANSWER + HOG + SEND + UNHOG + SEND,
 'rent_echo_pool_dry': send(get(b'/defer') + get(b'/plaintext') + post(b'/rent-echo', b'hello')) + READ + ANSWER + HOG + SEND + UNHOG + SEND,
 'rent_echo': send(post(b'/rent-echo', b'r' * 1500) + get(b'/plaintext'), 50) + READ + SEND + READ + SEND,
 'rent_echo_chunked': send(chunked(b'/rent-echo', b'5\r\nhello\r\n400\r\n' + b'k' * 1024 + b'\r\n0\r\n\r\n')) + RING + SEND,
 'rent_echo_too_large': send(post(b'/rent-echo', b'r' * 2500)) + READ + READ + SEND,
 'rent_echo_aborted': send(post(b'/rent-echo', b'r' * 1500)[:-700]) + READ + FAIL,
 'rent_echo_eof': send(post(b'/rent-echo', b'r' * 1500)[:-700]) + READ + EOF_ + READ,
 'close_head': send(get(b'/close-head') + get(b'/plaintext')) + READ + SEND + READ,
 'close_after': send(get(b'/close-after') + get(b'/plaintext')) + READ + SEND + READ,
 'close_data': send(post(b'/close-data', b'd' * 2000) + get(b'/plaintext')) + READ + SEND + READ + SEND,
 'close_data_chunked': send(chunked(b'/close-data', b'3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n') + get(b'/plaintext'), 9) + READ + SEND + READ,
 'close_data_no_body': send(get(b'/close-data') + get(b'/plaintext')) + READ + SEND,
 'close_end': send(post(b'/close-end', b'e' * 300) + get(b'/plaintext')) + READ + SEND + READ + SEND,
 'close_end_chunked': send(chunked(b'/close-end', b'4\r\nabcd\r\n0\r\n\r\n') + get(b'/plaintext')) + READ + SEND,
 'close_resume': send(get(b'/close-resume') + get(b'/plaintext')) + READ + SEND + ANSWER + SEND + READ,
 'close_fill': send(get(b'/close-fill') + get(b'/plaintext')) + READ + short(30) + SEND + SEND + SEND + SEND,
 'defer_now': send(get(b'/defer-now') + get(b'/plaintext')) + READ + SEND + ANSWER + SEND,
 'fresh_deadline': TIMER,
 'fresh_deadline_unread': send(get(b'/plaintext')) + TIMER,
})
# A StaticResponse within the whole-body limit (32 KiB) but over one block of the pool's large
# class (8 KiB here, the target's max_head being 1 KiB): written across blocks, not refused.
seeds['static_over_one_block'] = send(get(b'/static/9000') + get(b'/plaintext')) + READ + SEND
# Upgrades: GET /upgrade switches to the `echo` protocol (see the harness's docs).
UP = b'Connection: upgrade\r\nUpgrade: echo\r\n'
def up(extra=b'', v=b'1.1', method=b'GET'): return method + b' /upgrade HTTP/' + v + b'\r\n' + H + UP + extra + b'\r\n'
seeds.update({
 'upgrade_echo': send(up() + b'hello') + READ + SEND + send(b' world') + READ + SEND + READ + SEND,
 'upgrade_echo_ring': send(up() + b'x' * 300, 37) + RING + RING + SEND + RING + SEND,
 'upgrade_bang': send(up() + b'abc!def') + READ + SEND + send(b'more') + READ + SEND + READ,
 'upgrade_large_reads': send(up()) + READ + SEND + send(b'L' * 9000) + READ + SEND + READ + SEND + READ + SEND,
 'upgrade_backpressure': send(up()) + READ + SEND + send(b'b' * 3000) + READ + short(5) + READ + SEND + READ + SEND,
 'upgrade_shutdown': send(up() + b'hi') + READ + SEND + SHUT + SEND + READ,
 'upgrade_wake': send(up() + b'hi') + READ + SEND + ANSWER + ANSWER + SEND + send(b'yo') + READ + SEND,
 'upgrade_timeout': send(up() + b'hi') + READ + SEND + TIMER,
 'upgrade_eof': send(up() + b'last') + EOF_ + READ + SEND + READ + SEND,
 'upgrade_pool_dry': send(up()) + READ + SEND + HOG + send(b'dry') + READ + SEND + UNHOG + READ + SEND,
 'upgrade_refused': send(up(method=b'HEAD') + up(b'Content-Length: 2\r\n') + b'ab' + get(b'/upgrade') + up(b'Connection: close\r\n')) + READ + SEND + READ + SEND,
 'upgrade_refused_http10': send(up(v=b'1.0', extra=b'Connection: keep-alive\r\n') + up(v=b'1.0')) + READ + SEND + READ + SEND,
 'upgrade_pipelined_after': send(get(b'/plaintext') + up() + get(b'/plaintext')) + READ + SEND + READ + SEND,
 'upgrade_versioned': send(get(b'/upgrade', extra=b'Connection: keep-alive, Upgrade\r\nUpgrade: h2c, ECHO/2\r\n') + b'v2') + READ + SEND,
})
# WebSocket: GET /ws through bufslab_server::ws, echoing; messages over 100 bytes come in
# fragments, frames over 3000 bytes and messages over 5000 are refused (1009).
WS = b'GET /ws HTTP/1.1\r\n' + H + b'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
def frame(op, payload, fin=True, mask=b'\x37\xfa\x21\x3d'):
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | op])
    if n < 126: head += bytes([0x80 | n])
    elif n < 65536: head += bytes([0x80 | 126]) + n.to_bytes(2, 'big')
    else: head += bytes([0x80 | 127]) + n.to_bytes(8, 'big')
    if mask is None: return bytes([head[0], head[1] & 0x7f]) + head[2:] + payload
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
TEXT, BIN, CONT, CLOSE, PING, PONG = 1, 2, 0, 8, 9, 10
def close(code=1000, reason=b''): return frame(CLOSE, code.to_bytes(2, 'big') + reason)
LARGE = send(frame(BIN, b'q' * 2900, fin=False) + frame(CONT, b'q' * 1900)) + RING + SEND + (READ + SEND) * 2
seeds.update({
 'ws_echo': send(WS + frame(TEXT, b'hello') + frame(BIN, b'\x00\x01\x02') + close()) + READ + SEND + READ + SEND,
 'ws_fragmented_ping': send(WS + frame(TEXT, b'hel', fin=False) + frame(PING, b'p') + frame(CONT, b'lo') + frame(PONG, b'q') + close(1001, b'bye')) + READ + SEND + READ + SEND,
 'ws_large_messages': send(WS + frame(BIN, bytes(range(250))) + frame(TEXT, b'x' * 2000) + frame(TEXT, b'a' * 90, fin=False) + frame(CONT, b'b' * 90)) + READ + SEND + READ + SEND + READ + SEND,
 'ws_split': send(WS + frame(TEXT, 'h\u00e9llo w\u00f6rld'.encode()) + frame(PING, b'xyz') + frame(BIN, b'z' * 300), 7) + READ + SEND + READ + SEND + READ + SEND + READ + SEND,
 'ws_split_ring': send(WS + frame(TEXT, b'r' * 150) + frame(TEXT, b'ok'), 11) + RING + RING + SEND + RING + RING + SEND + RING + SEND,
 'ws_bad_utf8': send(WS + frame(TEXT, b'ok') + frame(TEXT, b'a\xffb')) + READ + SEND + READ,
 'ws_bad_utf8_late': send(WS + frame(TEXT, b'c' * 150 + b'\xc3')) + READ + SEND + READ,
 'ws_unmasked': send(WS + frame(TEXT, b'no mask', mask=None)) + READ + SEND + READ,
 'ws_frame_too_big': send(WS + frame(BIN, b'y' * 3001)) + READ + SEND + READ,
 'ws_message_too_big': send(WS + frame(BIN, b'm' * 2900, fin=False) + frame(CONT, b'm' * 2900)) + READ + SEND + READ + SEND,
 'ws_shutdown': send(WS + frame(TEXT, b'hi')) + READ + SEND + SHUT + SEND + READ,
 'ws_eof': send(WS + frame(TEXT, b'last')) + EOF_ + READ + SEND + READ,
 'ws_pool_dry': send(WS) + READ + SEND + HOG + send(frame(TEXT, b'd' * 120)) + READ + SEND + UNHOG + READ + SEND,
 'ws_wake': send(WS + frame(TEXT, b'w')) + READ + SEND + ANSWER + SEND,
 'ws_close_empty': send(WS + frame(CLOSE, b'')) + READ + SEND + READ,
 'ws_refused_version': send(WS.replace(b'Version: 13', b'Version: 8')) + READ + SEND,
 # A frame the adapter owes with the pool dry: a message that filled a small read block moves
 # the connection's reads to the large class, which the hog leaves, so the frame that asks for
 # it is read while no small block is left for the answer. The connection is failed without it.
 'ws_pool_dry_ping': send(WS) + READ + SEND + LARGE + send(frame(PING, b'p')) + HOG + READ + SEND + UNHOG + READ + SEND,
 'ws_pool_dry_close': send(WS) + READ + SEND + LARGE + send(close(1000)) + HOG + READ + SEND + UNHOG + READ,
 'ws_pool_dry_violation': send(WS) + READ + SEND + LARGE + send(frame(TEXT, b'a\xffb')) + HOG + READ + SEND + UNHOG + READ,
 'ws_pool_dry_shutdown': send(WS) + READ + SEND + HOG + SHUT + SEND + UNHOG + READ,
})
os.makedirs(out, exist_ok=True)
for k, v in seeds.items():
    open(os.path.join(out, k), 'wb').write(v)
print(len(seeds))
