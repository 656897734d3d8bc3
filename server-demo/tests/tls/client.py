"""A keep-alive HTTPS client for the TLS tests: Python's ssl module (OpenSSL) in its own
process, so that its allocations are not the server's. Runs each scenario for a warm-up,
then prints `warm NAME` and waits for `go` on stdin, runs it again, prints `done NAME` and
waits for `go`: the test counts the server's allocations in between. Then the same around
full and resumed handshakes (`full`, `resumed`).

usage: client.py HOST PORT CAFILE ROUNDS HANDSHAKES SUITE VERSION
(SUITE as OpenSSL names it; VERSION 1.3 or 1.2)
"""
import socket
import ssl
import sys

host, port, cafile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ROUNDS, HANDSHAKES, SUITE, VERSION = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
ctx = ssl.create_default_context(cafile=cafile)
if VERSION == "1.2":
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
else:
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3


def connect(session=None):
    s = ctx.wrap_socket(
        socket.create_connection((host, port)), server_hostname="localhost", session=session
    )
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class Reader:
    def __init__(self, s):
        self.s, self.buf = s, b""

    def fill(self):
        d = self.s.recv(262144)
        if not d:
            raise EOFError("server closed")
        self.buf += d

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        i = self.buf.index(b"\r\n")
        line, self.buf = self.buf[:i], self.buf[i + 2 :]
        return line

    def take(self, n):
        while len(self.buf) < n:
            self.fill()
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def response(self):
        status = self.line()
        assert status.startswith(b"HTTP/1.1 200 "), status
        length, chunked = 0, False
        while True:
            line = self.line()
            if not line:
                break
            k, v = line.split(b":", 1)
            k, v = k.strip().lower(), v.strip()
            if k == b"content-length":
                length = int(v)
            elif k == b"transfer-encoding" and v.lower() == b"chunked":
                chunked = True
        if not chunked:
            return self.take(length)
        body = b""
        while True:
            n = int(self.line().split(b";")[0], 16)
            if n == 0:
                while self.line():
                    pass
                return body
            body += self.take(n)
            self.take(2)


PLAIN = b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n"
JSON = b"GET /json HTTP/1.1\r\nHost: t\r\n\r\n"
KIB = bytes(i % 251 for i in range(1024))
ECHO = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1024\r\n\r\n" + KIB
BIG = bytes(i % 241 for i in range(65536))
CHUNKED = (
    b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x\r\n" % 8192 + BIG[i : i + 8192] + b"\r\n" for i in range(0, len(BIG), 8192))
    + b"0\r\n\r\n"
)
SCENARIOS = [
    ("plaintext", PLAIN, 1, None),
    ("json", JSON, 1, None),
    ("pipelined16", PLAIN * 16, 16, None),
    ("echo1k", ECHO, 1, KIB),
    ("chunked64k", CHUNKED, 1, BIG),
]


def sync(tag):
    print(tag, flush=True)
    assert sys.stdin.readline().strip() == "go"


s = connect()
assert s.cipher()[0] == SUITE, (s.cipher(), SUITE)
assert s.version() == "TLSv" + VERSION, (s.version(), VERSION)
r = Reader(s)


def run(req, n, expect, rounds):
    for _ in range(rounds):
        s.sendall(req)
        for _ in range(n):
            body = r.response()
            assert expect is None or body == expect


for name, req, n, expect in SCENARIOS:
    run(req, n, expect, 20)
    sync("warm " + name)
    run(req, n, expect, ROUNDS)
    sync("done " + name)
s.close()


def one_request(c):
    c.sendall(PLAIN)
    Reader(c).response()


# The session to resume: its ticket comes after the handshake, with the first response.
c = connect()
one_request(c)
session = c.session
c.close()
sync("full")
for _ in range(HANDSHAKES):
    c = connect()
    one_request(c)
    c.close()
sync("resumed")
for _ in range(HANDSHAKES):
    c = connect(session)
    assert c.session_reused
    one_request(c)
    c.close()
sync("end")
