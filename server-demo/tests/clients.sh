#!/usr/bin/env bash
# Tries the release server the way a new user would: curl -v, curl --http1.0, Python's
# http.client, wrk (plain and 16-deep pipelined) and h2load --h1, each short and bounded.
# Then SIGTERM, and checks the exit status and the one-line summary.
#
# Then the same over HTTPS, with a certificate openssl makes for the run (ECDSA P-256, for
# localhost and 127.0.0.1): curl, Python's ssl, openssl s_client (each TLS 1.3 suite and each
# TLS 1.2 ECDHE-ECDSA suite; a session resumed with -sess_out/-sess_in; KeyUpdates sent with
# its K and k commands, then a request; a TLS 1.2 renegotiation, its R command, refused with a
# no_renegotiation warning), wrk and h2load --h1; with --tls12 off, TLS 1.2 refused with a
# protocol_version alert (s_client -tls1_2, curl --tls-max 1.2); with --tls-client-ca, curl
# served with a client certificate the CA issued and refused without one or with another;
# and start-up refused (exit
# status 2, the problem named) for a missing certificate file, a key file with no key, and a
# key that is not the certificate's.
#
#   server-demo/tests/clients.sh            # builds the release binary if needed
#   PORT=9000 DURATION=2 server-demo/tests/clients.sh
#   STRICT=1 server-demo/tests/clients.sh   # a missing tool fails the run (CI)
#   IO=epoll server-demo/tests/clients.sh   # the driver (--io): auto (default), epoll, uring
#   FEATURES=aws-lc-rs CARGO_TARGET_DIR=target/aws-lc-rs server-demo/tests/clients.sh
#                                           # server-demo's cargo features (HTTPS on AWS-LC)
#
# Missing tools are installed with apt-get when possible (curl wrk nghttp2-client), else
# skipped with a note. Exits non-zero on the first failed check.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PORT="${PORT:-18088}"
DURATION="${DURATION:-3}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET/release/server-demo"
BASE="http://127.0.0.1:$PORT"
LOG="$(mktemp)"
FAILS=0

ok()   { echo "  ok   $*"; }
bad()  { echo "  FAIL $*"; FAILS=$((FAILS + 1)); }
# With STRICT=1 (as CI runs it) a missing tool is a failure, not a skip.
skip() { if [ "${STRICT:-0}" = 1 ]; then bad "$*"; else echo "  skip $*"; fi; }
have() { command -v "$1" >/dev/null 2>&1; }

install_missing() {
    local need=()
    have curl || need+=(curl)
    have wrk || need+=(wrk)
    have h2load || need+=(nghttp2-client)
    have openssl || need+=(openssl)
    if [ "${#need[@]}" -gt 0 ] && have apt-get && [ "$(id -u)" = 0 ]; then
        echo "installing: ${need[*]}"
        timeout 300 apt-get install -y "${need[@]}" >/dev/null 2>&1 || echo "apt-get failed; continuing"
    fi
}

install_missing
echo "== build"
(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release -p server-demo ${FEATURES:+--features "$FEATURES"} 2>&1 | tail -1)

echo "== start"
"$BIN" --addr "127.0.0.1:$PORT" --workers 2 ${IO:+--io "$IO"} >"$LOG" 2>&1 &
PID=$!
cleanup() { kill -9 "$PID" 2>/dev/null || true; rm -f "$LOG"; }
trap cleanup EXIT
for _ in $(seq 100); do
    grep -q "listening on" "$LOG" && break
    sleep 0.05
done
head -1 "$LOG"

echo "== curl"
if have curl; then
    out="$(curl -sv --max-time 5 "$BASE/plaintext" 2>&1)"
    grep -q "< HTTP/1.1 200 OK" <<<"$out" && grep -q "Hello, World!" <<<"$out" \
        && grep -qi "< date: " <<<"$out" && grep -qi "< server: server-demo" <<<"$out" \
        && ok "curl -v /plaintext: 200, Server, Date, body" || bad "curl -v /plaintext: $out"
    out="$(curl -s --max-time 5 --http1.0 -i "$BASE/json")"
    grep -q '{"message":"Hello, World!"}' <<<"$out" && grep -qi "connection: close" <<<"$out" \
        && ok "curl --http1.0 /json: body, Connection: close" || bad "curl --http1.0: $out"
    out="$(curl -s --max-time 5 -I "$BASE/plaintext")"
    grep -qi "content-length: 13" <<<"$out" && ok "curl -I (HEAD) /plaintext: Content-Length 13" || bad "HEAD: $out"
    head -c 1048576 /dev/urandom >"$LOG.body"
    out="$(curl -s --max-time 10 --data-binary @"$LOG.body" "$BASE/echo" | cmp - "$LOG.body" && echo same)"
    [ "$out" = same ] && ok "curl POST 1 MiB /echo (Content-Length, Expect: 100-continue)" || bad "1 MiB echo"
    out="$(curl -s --max-time 10 -H 'Transfer-Encoding: chunked' --data-binary @"$LOG.body" "$BASE/echo" | cmp - "$LOG.body" && echo same)"
    [ "$out" = same ] && ok "curl POST 1 MiB chunked /echo" || bad "chunked echo"
    rm -f "$LOG.body"
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X DELETE "$BASE/json")"
    [ "$code" = 405 ] && ok "curl DELETE /json: 405" || bad "405: $code"
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/nope")"
    [ "$code" = 404 ] && ok "curl /nope: 404" || bad "404: $code"
    n="$(curl -sv --max-time 5 "$BASE/plaintext" "$BASE/json" "$BASE/plaintext" 2>&1 | grep -c "Re-using existing connection" || true)"
    [ "$n" -ge 2 ] && ok "curl keep-alive: connection re-used for $n requests" || bad "curl reuse: $n"
else
    skip "curl not installed"
fi

echo "== python http.client"
if have python3; then
    if PORT="$PORT" timeout 20 python3 - <<'PY'
import http.client, json, os
c = http.client.HTTPConnection("127.0.0.1", int(os.environ["PORT"]), timeout=5)
for _ in range(3):
    c.request("GET", "/plaintext"); r = c.getresponse(); assert r.status == 200 and r.read() == b"Hello, World!"
c.request("GET", "/json"); r = c.getresponse(); assert json.loads(r.read()) == {"message": "Hello, World!"}
c.request("HEAD", "/json"); r = c.getresponse(); assert r.status == 200 and r.getheader("Content-Length") == "27"; r.read()
body = os.urandom(200_000)
c.request("POST", "/echo", body=body); r = c.getresponse(); assert r.read() == body
c.request("POST", "/echo", body=iter([b"abc", b"defg"]), encode_chunked=True); r = c.getresponse(); assert r.read() == b"abcdefg"
c.request("GET", "/stats"); r = c.getresponse(); s = json.loads(r.read()); assert s["requests"] > 0
print("  ok   python http.client: keep-alive GET/HEAD/POST (200 kB, chunked) on one connection; stats requests =", s["requests"])
PY
    then :; else bad "python http.client"; fi
else
    skip "python3 not installed"
fi

echo "== wrk"
if have wrk; then
    out="$(timeout $((DURATION + 10)) wrk -t2 -c64 -d"${DURATION}s" "$BASE/plaintext" 2>&1)"
    echo "$out" | grep -E "Requests/sec|requests in|Socket errors|Non-2xx" | sed 's/^/       /'
    grep -q "Non-2xx" <<<"$out" && bad "wrk saw non-2xx" || ok "wrk -c64 /plaintext"
    lua="$(mktemp --suffix=.lua)"
    cat >"$lua" <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, "/plaintext") end
  req = table.concat(r)
end
request = function() return req end
LUA
    out="$(timeout $((DURATION + 10)) wrk -t2 -c64 -d"${DURATION}s" -s "$lua" "$BASE/plaintext" 2>&1)"
    rm -f "$lua"
    echo "$out" | grep -E "Requests/sec|requests in|Socket errors|Non-2xx" | sed 's/^/       /'
    grep -q "Non-2xx" <<<"$out" && bad "wrk pipelined saw non-2xx" || ok "wrk -c64 pipelined x16 /plaintext"
else
    skip "wrk not installed"
fi

echo "== h2load --h1"
if have h2load; then
    for m in 1 16; do
        out="$(timeout 60 h2load --h1 -n 50000 -c 32 -m "$m" "$BASE/json" 2>&1)"
        echo "$out" | grep -E "^finished in|^requests:|^status codes:" | sed 's/^/       /'
        grep -q "50000 succeeded, 0 failed, 0 errored" <<<"$out" && ok "h2load --h1 -c32 -m$m /json: 50000 succeeded" || bad "h2load -m$m"
    done
else
    skip "h2load not installed"
fi

echo "== /stats, then SIGTERM"
have curl && curl -s --max-time 5 "$BASE/stats" && echo
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
tail -1 "$LOG"
[ "$rc" = 0 ] && ok "exit status 0 after SIGTERM" || bad "exit status $rc"
grep -q " 0 blocks still rented" "$LOG" && ok "no pool block rented at exit" || bad "blocks still rented"
trap - EXIT
rm -f "$LOG"

echo "== HTTPS"
if ! have openssl; then
    skip "HTTPS: openssl not installed (it makes the certificate and is a client)"
else
    TLS_PORT=$((PORT + 1))
    TLS_BASE="https://127.0.0.1:$TLS_PORT"
    TLS_DIR="$(mktemp -d)"
    TLS_PID=
    tls_cleanup() {
        [ -n "$TLS_PID" ] && kill -9 "$TLS_PID" 2>/dev/null || true
        rm -rf "$TLS_DIR" "$LOG"
    }
    trap tls_cleanup EXIT
    CERT="$TLS_DIR/cert.pem"
    KEY="$TLS_DIR/key.pem"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -addext basicConstraints=critical,CA:FALSE \
        -keyout "$KEY" -out "$CERT" 2>"$TLS_DIR/openssl.log" \
        || { cat "$TLS_DIR/openssl.log"; bad "openssl could not make the certificate"; }

    echo "== HTTPS: start-up refused for a certificate or key that does not load or match"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$TLS_DIR/other.pem" 2>/dev/null
    # What each must name: the file, or that the key is not the certificate's.
    refused() {
        local what="$1" want="$2" rc=0 out
        shift 2
        out="$(timeout 10 "$BIN" --addr "127.0.0.1:$TLS_PORT" --workers 1 ${IO:+--io "$IO"} "$@" 2>&1)" || rc=$?
        if [ "$rc" = 2 ] && grep -q -- "$want" <<<"$out"; then
            ok "start-up refused, $what: exit 2, \"$(head -1 <<<"$out")\""
        else
            bad "$what: exit $rc, wanted 2 and \"$want\": $(head -3 <<<"$out")"
        fi
    }
    refused "missing certificate file" "$TLS_DIR/missing.pem: No such file" \
        --tls-cert "$TLS_DIR/missing.pem" --tls-key "$KEY"
    refused "key file with no key (the certificate given as the key)" "$CERT: no private key" \
        --tls-cert "$CERT" --tls-key "$CERT"
    refused "a key that is not the certificate's" "does not match the certificate" \
        --tls-cert "$CERT" --tls-key "$TLS_DIR/other.pem"

    echo "== HTTPS: start"
    # Plain HTTP on the next port too: one server, both kinds of listener.
    "$BIN" --addr "127.0.0.1:$TLS_PORT" --http-addr "127.0.0.1:$((TLS_PORT + 1))" --workers 2 \
        ${IO:+--io "$IO"} --tls-cert "$CERT" --tls-key "$KEY" >"$LOG" 2>&1 &
    TLS_PID=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$LOG" && break
        sleep 0.05
    done
    head -1 "$LOG"
    grep -q "listening on https://" "$LOG" || bad "no https listening line"

    echo "== HTTPS: curl"
    if have curl; then
        out="$(curl -sv --max-time 5 --cacert "$CERT" "$TLS_BASE/plaintext" 2>&1)" || true
        grep -q "SSL connection using TLSv1.3" <<<"$out" && grep -q "ALPN.*http/1.1" <<<"$out" \
            && grep -q "< HTTP/1.1 200 OK" <<<"$out" && grep -q "Hello, World!" <<<"$out" \
            && ok "curl -v https /plaintext: TLSv1.3, ALPN http/1.1, certificate verified, 200, body" \
            || bad "curl https: $out"
        # curl --http1.0 offers ALPN http/1.0 alone: the server's second choice.
        out="$(curl -s --max-time 5 --cacert "$CERT" --http1.0 -i "https://localhost:$TLS_PORT/json")" || true
        grep -q '{"message":"Hello, World!"}' <<<"$out" && grep -qi "connection: close" <<<"$out" \
            && ok "curl --http1.0 https://localhost /json (ALPN http/1.0): body, Connection: close" || bad "curl https --http1.0: $out"
        head -c 1048576 /dev/urandom >"$TLS_DIR/body"
        out="$(curl -s --max-time 10 --cacert "$CERT" --data-binary @"$TLS_DIR/body" "$TLS_BASE/echo" | cmp - "$TLS_DIR/body" && echo same)" || true
        [ "$out" = same ] && ok "curl https POST 1 MiB /echo" || bad "https 1 MiB echo"
        out="$(curl -s --max-time 10 --cacert "$CERT" -H 'Transfer-Encoding: chunked' --data-binary @"$TLS_DIR/body" "$TLS_BASE/echo" | cmp - "$TLS_DIR/body" && echo same)" || true
        [ "$out" = same ] && ok "curl https POST 1 MiB chunked /echo" || bad "https chunked echo"
        n="$(curl -sv --max-time 5 --cacert "$CERT" "$TLS_BASE/plaintext" "$TLS_BASE/json" "$TLS_BASE/plaintext" 2>&1 | grep -c "Re-using existing connection" || true)" || true
        [ "$n" -ge 2 ] && ok "curl https keep-alive: connection re-used for $n requests" || bad "curl https reuse: $n"
        out="$(curl -sv --max-time 5 --cacert "$CERT" --tls-max 1.2 "$TLS_BASE/plaintext" 2>&1)" || true
        grep -q "SSL connection using TLSv1.2" <<<"$out" && grep -q "Hello, World!" <<<"$out" \
            && ok "curl --tls-max 1.2: TLSv1.2, 200, body" || bad "curl --tls-max 1.2: $out"
    else
        skip "curl not installed"
    fi

    echo "== HTTPS: python ssl"
    if have python3; then
        if PORT="$TLS_PORT" CERT="$CERT" timeout 30 python3 - <<'PY'
import http.client, json, os, socket, ssl
port, cert = int(os.environ["PORT"]), os.environ["CERT"]
ctx = ssl.create_default_context(cafile=cert)
ctx.set_alpn_protocols(["http/1.1"])
c = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=ctx)
for _ in range(3):
    c.request("GET", "/plaintext"); r = c.getresponse(); assert r.status == 200 and r.read() == b"Hello, World!"
assert c.sock.version() == "TLSv1.3", c.sock.version()
assert c.sock.selected_alpn_protocol() == "http/1.1"
suite = c.sock.cipher()[0]
c.request("GET", "/json"); r = c.getresponse(); assert json.loads(r.read()) == {"message": "Hello, World!"}
c.request("HEAD", "/json"); r = c.getresponse(); assert r.status == 200 and r.getheader("Content-Length") == "27"; r.read()
body = os.urandom(200_000)
c.request("POST", "/echo", body=body); r = c.getresponse(); assert r.read() == body
c.request("POST", "/echo", body=iter([b"abc", b"defg"]), encode_chunked=True); r = c.getresponse(); assert r.read() == b"abcdefg"
c.close()
# Resumption: a second connection with the first one's session (its ticket came with a response).
s1 = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5), server_hostname="localhost")
s1.sendall(b"GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
got = b""
while (d := s1.recv(4096)):
    got += d
assert got.startswith(b"HTTP/1.1 200") and got.endswith(b"Hello, World!"), got
session = s1.session; s1.close()
s2 = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5), server_hostname="localhost", session=session)
assert s2.session_reused, "not resumed"
s2.sendall(b"GET /json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
got = b""
while (d := s2.recv(4096)):
    got += d
assert got.endswith(b'{"message":"Hello, World!"}'), got
s2.close()
# TLS 1.2 only: served, keep-alive, with a body.
old = ssl.create_default_context(cafile=cert)
old.maximum_version = ssl.TLSVersion.TLSv1_2
c = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=old)
for _ in range(3):
    c.request("GET", "/plaintext"); r = c.getresponse(); assert r.status == 200 and r.read() == b"Hello, World!"
assert c.sock.version() == "TLSv1.2", c.sock.version()
suite12 = c.sock.cipher()[0]
c.request("POST", "/echo", body=body); r = c.getresponse(); assert r.read() == body
c.close()
print("  ok   python ssl: TLSv1.3", suite, "ALPN http/1.1; keep-alive GET/HEAD/POST (200 kB, chunked); session resumed; TLSv1.2", suite12, "keep-alive")
PY
        then :; else bad "python ssl"; fi
    else
        skip "python3 not installed"
    fi

    echo "== HTTPS: openssl s_client"
    REQ='GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n'
    REQ_CLOSE='GET /json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
    s_client() {
        timeout 20 openssl s_client -connect "127.0.0.1:$TLS_PORT" -servername localhost \
            -CAfile "$CERT" -verify_return_error -alpn http/1.1 "$@" 2>&1
    }
    for suite in TLS_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384 TLS_CHACHA20_POLY1305_SHA256; do
        out="$({ printf "$REQ_CLOSE"; sleep 2; } | s_client -tls1_3 -ciphersuites "$suite")" || true
        grep -q "New, TLSv1.3, Cipher is $suite" <<<"$out" && grep -q "Verify return code: 0 (ok)" <<<"$out" \
            && grep -q '{"message":"Hello, World!"}' <<<"$out" \
            && ok "s_client -tls1_3 -ciphersuites $suite: verified, /json answered" || bad "s_client $suite: $(grep -E "Cipher is|Verify return|HTTP/1.1|alert|error" <<<"$out")"
    done
    out="$({ printf "$REQ_CLOSE"; sleep 2; } | s_client -tls1_3 -sess_out "$TLS_DIR/sess.pem")" || true
    grep -q '{"message":"Hello, World!"}' <<<"$out" || bad "s_client -sess_out: $(grep -E "Cipher is|HTTP/1.1|alert|error" <<<"$out")"
    out="$({ printf "$REQ_CLOSE"; sleep 2; } | s_client -tls1_3 -sess_in "$TLS_DIR/sess.pem")" || true
    grep -q "Reused, TLSv1.3" <<<"$out" && grep -q '{"message":"Hello, World!"}' <<<"$out" \
        && ok "s_client -sess_out, then -sess_in: Reused, TLSv1.3, /json answered" || bad "s_client resumption: $(grep -E "Cipher is|HTTP/1.1|alert|error" <<<"$out")"
    for cmd in K k; do
        # The command letter alone on its line, between two requests on one connection.
        out="$({ printf "$REQ"; sleep 1; echo "$cmd"; sleep 1; printf "$REQ"; sleep 1; printf "$REQ_CLOSE"; sleep 2; } \
            | s_client -tls1_3)" || true
        n="$(grep -c "HTTP/1.1 200 OK" <<<"$out" || true)"
        grep -q "KEYUPDATE" <<<"$out" && [ "$n" = 3 ] \
            && ok "s_client $cmd (KeyUpdate$([ "$cmd" = K ] && echo ", update requested")) between requests: all 3 answered" \
            || bad "s_client $cmd: $n answers: $(grep -E "KEYUPDATE|HTTP/1.1|alert|error" <<<"$out")"
    done
    for suite in ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384 ECDHE-ECDSA-CHACHA20-POLY1305; do
        out="$({ printf "$REQ_CLOSE"; sleep 2; } | s_client -tls1_2 -cipher "$suite")" || true
        grep -q "New, TLSv1.2, Cipher is $suite" <<<"$out" && grep -q "Verify return code: 0 (ok)" <<<"$out" \
            && grep -q '{"message":"Hello, World!"}' <<<"$out" \
            && ok "s_client -tls1_2 -cipher $suite: verified, /json answered" || bad "s_client -tls1_2 $suite: $(grep -E "Cipher is|Verify return|HTTP/1.1|alert|error" <<<"$out")"
    done
    # R: a renegotiation. The server refuses it with a no_renegotiation warning, as rustls
    # does; OpenSSL then gives up with a fatal handshake_failure and "no renegotiation".
    rc=0
    out="$({ printf "$REQ"; sleep 1; echo R; sleep 1; printf "$REQ"; sleep 1; } | s_client -tls1_2 -msg)" || rc=$?
    n="$(grep -c "HTTP/1.1 200 OK" <<<"$out" || true)"
    [ "$rc" != 0 ] && [ "$n" = 1 ] && grep -q "RENEGOTIATING" <<<"$out" \
        && grep -q "<<< TLS 1.2, Alert \[length 0002\], warning no_renegotiation" <<<"$out" \
        && grep -q "no renegotiation" <<<"$out" \
        && ok "s_client -tls1_2, R (renegotiation): refused with a no_renegotiation warning" \
        || bad "s_client R: exit $rc, $n answers: $(grep -E "RENEGOTIATING|Alert|HTTP/1.1|error" <<<"$out")"

    echo "== HTTPS: wrk"
    if have wrk; then
        out="$(timeout $((DURATION + 10)) wrk -t2 -c16 -d"${DURATION}s" "$TLS_BASE/plaintext" 2>&1)" || true
        echo "$out" | grep -E "Requests/sec|requests in|Socket errors|Non-2xx" | sed 's/^/       /'
        if grep -q "requests in" <<<"$out" && ! grep -qE "Non-2xx|Socket errors" <<<"$out"; then
            ok "wrk -c16 https /plaintext: no errors, no non-2xx"
        else
            bad "wrk https: $out"
        fi
    else
        skip "wrk not installed"
    fi

    echo "== HTTPS: h2load --h1"
    if have h2load; then
        out="$(timeout 60 h2load --h1 -n 2000 -c 8 "$TLS_BASE/json" 2>&1)" || true
        echo "$out" | grep -E "^finished in|^requests:|^status codes:|^TLS Protocol|^Cipher" | sed 's/^/       /'
        grep -q "2000 succeeded, 0 failed, 0 errored" <<<"$out" && grep -q "TLS Protocol: TLSv1.3" <<<"$out" \
            && ok "h2load --h1 -n 2000 -c 8 https /json: TLSv1.3, 2000 succeeded" || bad "h2load https: $out"
    else
        skip "h2load not installed"
    fi

    echo "== HTTPS: /stats, then SIGTERM"
    if have curl; then
        out="$(curl -s --max-time 5 "http://127.0.0.1:$((TLS_PORT + 1))/plaintext")" || true
        [ "$out" = "Hello, World!" ] && ok "curl http:// on --http-addr beside https:// on --addr: 200, body" \
            || bad "--http-addr: $out"
        stats="$(curl -s --max-time 5 --cacert "$CERT" "$TLS_BASE/stats")" || true
        echo "$stats"
        grep -q '"tls_handshakes":0[,}]' <<<"$stats" \
            && ok "/stats: no handshake in progress; $(grep -o '"tls_handshake_failures":[0-9]*' <<<"$stats"), $(grep -o '"tls_accept_holds":[0-9]*' <<<"$stats")" \
            || bad "/stats TLS counters: $stats"
    fi
    kill -TERM "$TLS_PID"
    rc=0
    wait "$TLS_PID" || rc=$?
    TLS_PID=
    tail -1 "$LOG"
    [ "$rc" = 0 ] && ok "HTTPS: exit status 0 after SIGTERM" || bad "HTTPS: exit status $rc"
    grep -q " 0 blocks still rented" "$LOG" && ok "HTTPS: no pool block rented at exit" || bad "HTTPS: blocks still rented"

    echo "== HTTPS: --tls12 off"
    "$BIN" --addr "127.0.0.1:$TLS_PORT" --workers 1 ${IO:+--io "$IO"} \
        --tls-cert "$CERT" --tls-key "$KEY" --tls12 off >"$LOG" 2>&1 &
    TLS_PID=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$LOG" && break
        sleep 0.05
    done
    rc=0
    out="$(s_client -tls1_2 </dev/null)" || rc=$?
    [ "$rc" != 0 ] && grep -q "alert protocol version" <<<"$out" \
        && ok "--tls12 off: s_client -tls1_2 refused with a protocol_version alert" || bad "--tls12 off, s_client -tls1_2: exit $rc: $(grep -E "Cipher is|alert|error" <<<"$out")"
    out="$({ printf "$REQ_CLOSE"; sleep 2; } | s_client -tls1_3)" || true
    grep -q '{"message":"Hello, World!"}' <<<"$out" && ok "--tls12 off: s_client -tls1_3 served" || bad "--tls12 off, TLS 1.3: $(grep -E "Cipher is|HTTP/1.1|alert|error" <<<"$out")"
    if have curl; then
        rc=0
        out="$(curl -sv --max-time 5 --cacert "$CERT" --tls-max 1.2 "$TLS_BASE/plaintext" 2>&1)" || rc=$?
        [ "$rc" = 35 ] && grep -qi "protocol version" <<<"$out" \
            && ok "--tls12 off: curl --tls-max 1.2 refused (exit 35, protocol version alert)" || bad "--tls12 off, curl --tls-max 1.2: exit $rc: $out"
    fi
    kill -TERM "$TLS_PID"
    rc=0
    wait "$TLS_PID" || rc=$?
    TLS_PID=
    [ "$rc" = 0 ] && ok "--tls12 off: exit status 0 after SIGTERM" || bad "--tls12 off: exit status $rc"

    echo "== HTTPS: --tls-client-ca (client certificates)"
    # A CA, and a client certificate it issues for client authentication.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=test-ca \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
        -keyout "$TLS_DIR/ca-key.pem" -out "$TLS_DIR/ca.pem" 2>>"$TLS_DIR/openssl.log"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=client \
        -keyout "$TLS_DIR/client-key.pem" -out "$TLS_DIR/client.csr" 2>>"$TLS_DIR/openssl.log"
    printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' >"$TLS_DIR/client.ext"
    openssl x509 -req -in "$TLS_DIR/client.csr" -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca-key.pem" \
        -CAcreateserial -days 2 -extfile "$TLS_DIR/client.ext" -out "$TLS_DIR/client.pem" \
        2>>"$TLS_DIR/openssl.log" || bad "openssl could not make the client certificate"
    "$BIN" --addr "127.0.0.1:$TLS_PORT" --workers 1 ${IO:+--io "$IO"} \
        --tls-cert "$CERT" --tls-key "$KEY" --tls-client-ca "$TLS_DIR/ca.pem" >"$LOG" 2>&1 &
    TLS_PID=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$LOG" && break
        sleep 0.05
    done
    if have curl; then
        out="$(curl -s --max-time 5 --cacert "$CERT" --cert "$TLS_DIR/client.pem" --key "$TLS_DIR/client-key.pem" "$TLS_BASE/plaintext")" || true
        [ "$out" = "Hello, World!" ] && ok "--tls-client-ca: curl --cert (issued by the CA) served" || bad "--tls-client-ca, curl --cert: $out"
        rc=0
        out="$(curl -sv --max-time 5 --cacert "$CERT" "$TLS_BASE/plaintext" 2>&1)" || rc=$?
        [ "$rc" != 0 ] && grep -qi "certificate required" <<<"$out" \
            && ok "--tls-client-ca: curl without a certificate refused (exit $rc, certificate required)" || bad "--tls-client-ca, no certificate: exit $rc: $out"
        rc=0
        out="$(curl -sv --max-time 5 --cacert "$CERT" --cert "$CERT" --key "$KEY" "$TLS_BASE/plaintext" 2>&1)" || rc=$?
        [ "$rc" != 0 ] && ! grep -q "Hello, World!" <<<"$out" \
            && ok "--tls-client-ca: curl with a certificate from no CA of the file refused (exit $rc)" || bad "--tls-client-ca, stranger: exit $rc: $out"
    else
        skip "--tls-client-ca: curl not installed"
    fi
    kill -TERM "$TLS_PID"
    rc=0
    wait "$TLS_PID" || rc=$?
    TLS_PID=
    [ "$rc" = 0 ] && ok "--tls-client-ca: exit status 0 after SIGTERM" || bad "--tls-client-ca: exit status $rc"
    trap - EXIT
    rm -rf "$TLS_DIR" "$LOG"
fi

if [ "$FAILS" -gt 0 ]; then
    echo "clients.sh: $FAILS check(s) failed"
    exit 1
fi
echo "clients.sh: all checks passed"
