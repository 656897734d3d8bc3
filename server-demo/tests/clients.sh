#!/usr/bin/env bash
# Tries the release server the way a new user would: curl -v, curl --http1.0, Python's
# http.client, wrk (plain and 16-deep pipelined) and h2load --h1, each short and bounded.
# Then SIGTERM, and checks the exit status and the one-line summary.
#
#   server-demo/tests/clients.sh            # builds the release binary if needed
#   PORT=9000 DURATION=2 server-demo/tests/clients.sh
#   STRICT=1 server-demo/tests/clients.sh   # a missing tool fails the run (CI)
#   IO=epoll server-demo/tests/clients.sh   # the driver (--io): auto (default), epoll, uring
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
    if [ "${#need[@]}" -gt 0 ] && have apt-get && [ "$(id -u)" = 0 ]; then
        echo "installing: ${need[*]}"
        timeout 300 apt-get install -y "${need[@]}" >/dev/null 2>&1 || echo "apt-get failed; continuing"
    fi
}

install_missing
echo "== build"
(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release -p server-demo 2>&1 | tail -1)

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

if [ "$FAILS" -gt 0 ]; then
    echo "clients.sh: $FAILS check(s) failed"
    exit 1
fi
echo "clients.sh: all checks passed"
