"""The conn_tls fuzz target's seed corpus, one file per case: `python3 fuzz/seeds_tls.py
fuzz/seeds/conn_tls` (from server/). The script format is `bufslab_server::fuzzing::run_tls`'s
(fuzz_harness/tls.rs): a session byte, then operations."""
import os, sys
out = sys.argv[1]
def REQ(k, batch=False, flush=True): return bytes([(0x20 if flush else 0) | (0x10 if batch else 0) | k])
def READ(n=31): return bytes([0x40 | n])
def RING(n=31): return bytes([0x60 | n])
def SEND(n=0): return bytes([0x80 | n])
KU, DEADLINE, FLUSH, HOG, UNHOG, NOTIFY, EOF, SHUT = b'\xc0', b'\xc4', b'\xc8', b'\xd0', b'\xd8', b'\xe0', b'\xf0', b'\xf8'
HANDSHAKE = READ() + SEND() + READ() + SEND() + READ() + SEND()
EXCHANGE = READ() + SEND() + READ() + SEND()
sessions = {'13_aes128': 0x00, '13_aes256': 0x02, '13_chacha': 0x04, '12_aes128': 0x01,
            '12_aes256': 0x03, '12_chacha': 0x05, '13_limit': 0x80, '12_limit': 0x81}
seeds = {}
for name, s in sessions.items():
    seeds['keep_alive_' + name] = bytes([s]) + HANDSHAKE + REQ(3) + EXCHANGE + REQ(5) + EXCHANGE + REQ(15) + EXCHANGE * 3
    seeds['pipelined_' + name] = bytes([s]) + REQ(4, batch=True) + REQ(1, batch=True) + HANDSHAKE + EXCHANGE * 4
seeds.update({
 'bytewise': b'\x00' + REQ(3) + (READ(0) + SEND(1)) * 400,
 'ring_blocks': b'\x02' + REQ(13) + (RING(3) + SEND()) * 10 + REQ(14, batch=True) + (RING(31) + SEND(7)) * 40,
 'large_responses_in_pieces': b'\x00' + HANDSHAKE + REQ(15) + REQ(12) + (READ() + SEND(63)) * 40,
 'key_updates_both_ways': b'\x80' + HANDSHAKE + (REQ(3) + KU + FLUSH + EXCHANGE) * 6,
 'pool_taken': b'\x00' + HANDSHAKE + REQ(3) + HOG + EXCHANGE + UNHOG + REQ(4) + EXCHANGE,
 'pool_taken_mid_handshake': b'\x00' + READ() + HOG + SEND() + READ() + SEND() + UNHOG + REQ(1) + EXCHANGE,
 'close_notify': b'\x00' + HANDSHAKE + REQ(3) + EXCHANGE + NOTIFY + EXCHANGE,
 'close_notify_with_requests': b'\x02' + HANDSHAKE + REQ(5, batch=True) + NOTIFY + EXCHANGE * 3,
 'eof_mid_handshake': b'\x00' + READ() + SEND() + EOF,
 'eof_with_requests': b'\x01' + HANDSHAKE + REQ(9, batch=True) + EOF + EXCHANGE * 3,
 'deadline_mid_handshake': b'\x00' + READ() + SEND() + DEADLINE + EXCHANGE,
 'deadline_idle': b'\x02' + HANDSHAKE + REQ(3) + EXCHANGE + DEADLINE + REQ(4) + EXCHANGE,
 'deadline_mid_head': b'\x01' + HANDSHAKE + REQ(3, flush=False) + FLUSH + READ(0) + DEADLINE + EXCHANGE * 2,
 'shutdown_idle': b'\x00' + HANDSHAKE + REQ(3) + EXCHANGE + SHUT + EXCHANGE,
 'shutdown_busy': b'\x04' + HANDSHAKE + REQ(12, batch=True) + READ() + SHUT + EXCHANGE * 4,
 # TLS 1.2 up to its (lowered) record limit: the last response says Connection: close.
 'tls12_key_spent': b'\x81' + HANDSHAKE + (REQ(13) + EXCHANGE) * 80,
 'tls12_key_spent_pipelined': b'\x83' + HANDSHAKE + (REQ(14, batch=True) + READ() + SEND()) * 40 + EXCHANGE * 10,
})
os.makedirs(out, exist_ok=True)
for k, v in seeds.items():
    open(os.path.join(out, k), 'wb').write(v)
print(len(seeds))
