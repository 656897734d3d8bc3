"""WebSocket cases against a bufslab-server echo service, run by tests/websocket.rs.

usage: client.py PORT [CASE ...]

The well-formed cases use the `websockets` package's client; the violations use raw frames
over a socket, since that client masks everything and sends nothing invalid. Prints one line
per case; exits non-zero on the first failure. With WS_CA set to a CA certificate's PEM file,
every case runs over TLS (wss://localhost, the certificate checked against that CA).
"""

import asyncio
import os
import socket
import ssl
import struct
import sys
import time

from websockets.asyncio.client import connect as aconnect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

PORT = int(sys.argv[1])
CA = os.environ.get("WS_CA")
TLS = ssl.create_default_context(cafile=CA) if CA else None
URL = f"wss://localhost:{PORT}/ws" if TLS else f"ws://127.0.0.1:{PORT}/ws"
# A server that fails the connection may close right after its close frame, with or without
# TLS's close_notify: a write then finds the connection gone.
GONE = (BrokenPipeError, ConnectionResetError, ssl.SSLError)
HANDSHAKE = (
    b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def text_of(n):
    # Multi-byte code points throughout, so fragments split some of them.
    unit = "aé€😀"  # 1 + 2 + 3 + 4 bytes
    s = unit * (n // 10) + "a" * (n % 10)
    check(len(s.encode()) == n, "text length")
    return s


async def echo_sizes_async():
    sizes = [0, 1, 125, 126, 127, 4096, 16 << 10, (16 << 10) + 1, 65535, 65536, 1 << 20, 16 << 20]
    # The echo of a large message comes back in fragments while the client still sends it:
    # the client must read while it writes, as asyncio's does (the sync client holds a lock
    # over its send that its reader needs, and a server that stops reading once its output
    # backs up then waits for it forever), and must not stop reading at a queue's high-water
    # mark (max_queue).
    async with aconnect(URL, max_size=None, max_queue=None, close_timeout=10, ssl=TLS) as ws:
        for n in sizes:
            data = os.urandom(n)
            await ws.send(data)
            back = await asyncio.wait_for(ws.recv(), 60)
            check(back == data, f"binary echo of {n} bytes")
            text = text_of(n)
            await ws.send(text)
            back = await asyncio.wait_for(ws.recv(), 60)
            check(back == text, f"text echo of {n} bytes")
        await ws.close()
        check(ws.close_code == 1000, f"close code {ws.close_code}")


def echo_sizes():
    asyncio.run(echo_sizes_async())


async def fragmented_async():
    async with aconnect(URL, max_size=None, max_queue=None, ssl=TLS) as ws:
        # A small message in fragments comes back whole; a large one in fragments too.
        parts = ["Hel", "lo, ", "wörld"]
        await ws.send(parts)
        check(await ws.recv() == "".join(parts), "small fragmented text")
        big = [os.urandom(50_000) for _ in range(8)]
        await ws.send(big)
        check(await ws.recv() == b"".join(big), "large fragmented binary")
        # A code point split across fragments.
        euro = "€".encode()
        await ws.send([b"x" + euro[:1], euro[1:] + b"y"])
        check(await ws.recv() == b"x" + euro + b"y", "binary fragments")
        texts = ["a€"[:1], "€b", "c"]
        await ws.send(texts)
        check(await ws.recv() == "".join(texts), "text fragments")


def fragmented():
    asyncio.run(fragmented_async())


def raw():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    if TLS:
        s = TLS.wrap_socket(s, server_hostname="localhost")
    s.sendall(HANDSHAKE)
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        c = s.recv(1)
        check(c, "handshake answer")
        head += c
    check(head.startswith(b"HTTP/1.1 101 "), head.decode())
    check(b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head, "accept key")
    return s


def frame(op, payload, fin=True, mask=True, rsv=0, length=None):
    b0 = (0x80 if fin else 0) | rsv << 4 | op
    n = len(payload) if length is None else length
    m = 0x80 if mask else 0
    if n < 126:
        head = struct.pack("!BB", b0, m | n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, m | 126, n)
    else:
        head = struct.pack("!BBQ", b0, m | 127, n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def read_exact(s, n):
    out = b""
    while len(out) < n:
        c = s.recv(n - len(out))
        check(c, f"stream ended after {len(out)} of {n} bytes")
        out += c
    return out


def read_frame(s):
    b0, b1 = read_exact(s, 2)
    check(b1 & 0x80 == 0, "server frames are unmasked")
    n = b1 & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", read_exact(s, 2))
    elif n == 127:
        (n,) = struct.unpack("!Q", read_exact(s, 8))
    return b0 & 0x80 != 0, b0 & 0x0F, read_exact(s, n)


def read_end(s):
    rest = b""
    while True:
        c = s.recv(65536)
        if not c:
            return rest
        rest += c


def expect_close(s, code, what):
    fin, op, payload = read_frame(s)
    check(op == 0x8, f"{what}: a close frame, got opcode {op:#x} {payload[:40]!r}")
    got = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
    check(got == code, f"{what}: close code {got}, want {code}")
    check(read_end(s) == b"", f"{what}: nothing after the close")


def ping_in_fragmented_message():
    s = raw()
    s.sendall(frame(0x1, b"Hel", fin=False))
    s.sendall(frame(0x9, b"are you there"))
    s.sendall(frame(0x0, b"lo", fin=False))
    s.sendall(frame(0xA, b"unsolicited pong"))
    s.sendall(frame(0x9, b""))
    s.sendall(frame(0x0, b"!"))
    check(read_frame(s) == (True, 0xA, b"are you there"), "first pong")
    check(read_frame(s) == (True, 0xA, b""), "second pong")
    check(read_frame(s) == (True, 0x1, b"Hello!"), "message after pings")
    s.sendall(frame(0x8, struct.pack("!H", 1000) + b"bye"))
    expect_close(s, 1000, "client close")


def one_block():
    s = raw()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # In one write, so in one receive block: a whole message, a fragmented one with a ping
    # between its frames, and a whole text message.
    s.sendall(
        frame(0x2, b"one")
        + frame(0x1, b"Hel", fin=False)
        + frame(0x9, b"p")
        + frame(0x0, b"lo", fin=False)
        + frame(0x0, b"!")
        + frame(0x1, "\u00e9t\u00e9".encode())
    )
    check(read_frame(s) == (True, 0x2, b"one"), "whole message")
    check(read_frame(s) == (True, 0xA, b"p"), "pong")
    check(read_frame(s) == (True, 0x1, b"Hello!"), "fragmented message")
    check(read_frame(s) == (True, 0x1, "\u00e9t\u00e9".encode()), "text message")
    # A text message whose last code point is split between two writes: its start waits in
    # one receive block, its end comes in the next.
    f = frame(0x1, "a\u00e9".encode())
    s.sendall(f[:-1])
    time.sleep(0.05)
    s.sendall(f[-1:])
    check(read_frame(s) == (True, 0x1, "a\u00e9".encode()), "text across two writes")
    # And one that is invalid at its end, across two writes: nothing of it comes back.
    f = frame(0x1, b"ab\xe2\x28")
    s.sendall(f[:-2])
    time.sleep(0.05)
    s.sendall(f[-2:])
    expect_close(s, 1007, "invalid utf-8 across two writes")


def violation(name, frames_, code):
    s = raw()
    # A good message first: echoed, so the connection works.
    s.sendall(frame(0x1, b"ok"))
    check(read_frame(s) == (True, 0x1, b"ok"), f"{name}: echo before")
    for f in frames_:
        try:
            s.sendall(f)
        except GONE:
            break
    # Nothing of the violating frame comes back: the close is next.
    expect_close(s, code, name)


def violations():
    violation("invalid utf-8", [frame(0x1, b"abc\xff\xfedef")], 1007)
    violation("invalid utf-8 across fragments", [frame(0x1, b"ab\xe2", fin=False), frame(0x0, b"\x28\xa1")], 1007)
    violation("oversized frame", [frame(0x2, b"", length=(16 << 20) + 1)], 1009)
    violation("unmasked frame", [frame(0x1, b"hi", mask=False)], 1002)
    violation("rsv1", [frame(0x1, b"hi", rsv=4)], 1002)
    violation("rsv3", [frame(0x2, b"hi", rsv=1)], 1002)
    violation("reserved opcode 0x3", [frame(0x3, b"hi")], 1002)
    violation("reserved opcode 0xb", [frame(0xB, b"")], 1002)
    violation("continuation without a message", [frame(0x0, b"x")], 1002)
    violation("fragmented ping", [frame(0x9, b"x", fin=False)], 1002)
    violation("control over 125 bytes", [frame(0x9, b"x" * 126)], 1002)
    violation("bad close code", [frame(0x8, struct.pack("!H", 1005))], 1002)


def close_from_client():
    with connect(URL, ssl=TLS) as ws:
        ws.send("hi")
        check(ws.recv(timeout=10) == "hi", "echo")
        ws.close(code=4000, reason="done")
        check(ws.close_code == 4000, f"server echoes the close code, got {ws.close_code}")


def close_from_server():
    with connect(URL, ssl=TLS) as ws:
        ws.send("please close")
        try:
            ws.recv(timeout=10)
            check(False, "a close, not a message")
        except ConnectionClosed as e:
            check(e.rcvd is not None and e.rcvd.code == 4001, f"server close {e.rcvd}")
            check(e.rcvd.reason == "asked", f"reason {e.rcvd.reason!r}")


CASES = {
    "echo_sizes": echo_sizes,
    "fragmented": fragmented,
    "ping_in_fragmented_message": ping_in_fragmented_message,
    "one_block": one_block,
    "violations": violations,
    "close_from_client": close_from_client,
    "close_from_server": close_from_server,
}

for name in sys.argv[2:] or CASES:
    CASES[name]()
    print("ok", name, flush=True)
