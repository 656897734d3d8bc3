#!/usr/bin/env bash
# The fault soak: the release server-demo on loopback under a bounded mix of good and hostile
# clients (benches/src/bin/soak_client.rs), then checks that nothing was lost or left behind.
# Writes the result to RELIABILITY.md. See benches/load/README.md, "The fault soak".
#
#   benches/load/soak.sh                 # 10 minutes
#   benches/load/soak.sh --secs 60       # a short one
#   benches/load/soak.sh --tls           # every connection HTTPS (a certificate made with openssl)
#
# Exits 0 only if every check passed.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: benches/load/soak.sh [flags]

  --secs S          traffic time, warm-up included (default 600)
  --warm-secs S     warm-up before the warm RSS figure (default: secs / 10, 5 ..= 60)
  --seed N          the client's random seed (default 1)
  --io MODE         the server's I/O driver (--io of server-demo; default: the server's own)
  --tls             HTTPS: server-demo with --tls-cert/--tls-key (an ECDSA P-256 certificate
                    for 127.0.0.1 made with openssl), every client connection TLS 1.3
  --key-update-every N
                    with --tls: the client sends a KeyUpdate before every Nth exchange on its
                    keep-alive connections (default 16; 0 for none)
  --tls-record-limit N
                    with --tls: the server sends a KeyUpdate after every N records of one key
                    (server-demo --tls-record-limit; default 64; 0 for the suite's limit)
  --server-cpu N    CPU for the server (default 0)
  --client-cpu N    CPU for the client (default 1)
  --pool-max-bytes N
                    the server's pool bound (default 1048576; 2097152 with --tls)
  --report FILE     where the report goes (default RELIABILITY.md; - for none)
  --no-build        use the release binaries already built
  -h, --help        this text
EOF
}

SECS=600
WARM_SECS=
SEED=1
SERVER_CPU=0
CLIENT_CPU=1
REPORT=RELIABILITY.md
IO=
TLS=0
KEY_UPDATE_EVERY=16
POOL_MAX=
BUILD=1
ARGS=("$@")

here=$(cd "$(dirname "$0")" && pwd)
PROG=soak.sh
# shellcheck source=benches/load/common.sh
. "$here/common.sh"
while [[ $# -gt 0 ]]; do
  case $1 in
    --secs) need_value "$@"; SECS=$2; shift 2 ;;
    --warm-secs) need_value "$@"; WARM_SECS=$2; shift 2 ;;
    --seed) need_value "$@"; SEED=$2; shift 2 ;;
    --server-cpu) need_value "$@"; SERVER_CPU=$2; shift 2 ;;
    --client-cpu) need_value "$@"; CLIENT_CPU=$2; shift 2 ;;
    --io) need_value "$@"; IO=$2; shift 2 ;;
    --tls) TLS=1; shift ;;
    --tls-record-limit) need_value "$@"; TLS_RECORD_LIMIT=$2; shift 2 ;;
    --key-update-every) need_value "$@"; KEY_UPDATE_EVERY=$2; shift 2 ;;
    --pool-max-bytes) need_value "$@"; POOL_MAX=$2; shift 2 ;;
    --report) need_value "$@"; REPORT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown flag $1" ;;
  esac
done
for v in SECS SEED SERVER_CPU CLIENT_CPU KEY_UPDATE_EVERY ${WARM_SECS:+WARM_SECS} ${POOL_MAX:+POOL_MAX}; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done

cd "$here/../.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release

# The server's limits: small enough that the bursts reach them.
# Over HTTPS a connection also holds a block of ciphertext besides the core's: a head held
# incomplete in its 16 KiB block needs one more to receive the record that completes it, and a
# handshake borrows a large block for its flight. Under the 1 MiB bound the pool bursts' held
# heads then wait for a block until their header timeout (408); with 2 MiB the bursts still run
# the pool dry (pool_waits rises) and, under epoll, all finish.
if [ -z "$POOL_MAX" ]; then
  POOL_MAX=1048576
  [ "$TLS" = 1 ] && POOL_MAX=2097152
fi
SERVER_FLAGS=(
  --workers 2
  --max-conns 64
  --max-head 8192
  --max-body 1048576
  --header-timeout-ms 2000
  --idle-timeout-ms 5000
  --pool-max-bytes "$POOL_MAX"
  --pool-prealloc-slabs 2
)
[ -n "$IO" ] && SERVER_FLAGS+=(--io "$IO")

if [ "$BUILD" = 1 ]; then
  cargo build --release -p server-demo -p bufslab-benches
fi
for b in server-demo soak_client; do
  [[ -x $BIN/$b ]] || die "$BIN/$b is missing (build it, or drop --no-build)"
done

# The bursts open a few hundred connections at once.
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# Server and client on different cores, where there are two.
PIN_SERVER=()
PIN_CLIENT=()
PINNING="not pinned (taskset missing or fewer than 2 CPUs)"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  PIN_SERVER=(taskset -c "$SERVER_CPU")
  PIN_CLIENT=(taskset -c "$CLIENT_CPU")
  PINNING="server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU (taskset)"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

SCHEME=http
if [ "$TLS" = 1 ]; then
  command -v openssl >/dev/null || die "--tls needs openssl, to make the certificate"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -addext basicConstraints=critical,CA:FALSE \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>"$WORK/openssl.log" \
    || { cat "$WORK/openssl.log" >&2; die "openssl could not make the certificate"; }
  SERVER_FLAGS+=(--tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem")
  [ "${TLS_RECORD_LIMIT:-64}" != 0 ] && SERVER_FLAGS+=(--tls-record-limit "${TLS_RECORD_LIMIT:-64}")
  SCHEME=https
fi

# Port 0: a fixed port could join a stray server through SO_REUSEPORT.
"${PIN_SERVER[@]}" "$BIN/server-demo" --addr 127.0.0.1:0 "${SERVER_FLAGS[@]}" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
PORT=
for _ in $(seq 100); do
  PORT=$(sed -n "s/.*listening on $SCHEME:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p" "$WORK/server.log" | head -n 1)
  [ -n "$PORT" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$PORT" ]; then
  echo "soak.sh: the server did not start:" >&2
  cat "$WORK/server.log" >&2
  exit 1
fi
echo "soak.sh: server-demo (pid $SERVER_PID) on $SCHEME://127.0.0.1:$PORT, $PINNING; $SECS s of traffic"

CLIENT_FLAGS=(
  --addr "127.0.0.1:$PORT" --pid "$SERVER_PID" --secs "$SECS" --seed "$SEED"
  --workers 2 --max-conns 64 --max-head 8192 --max-body 1048576
  --header-timeout-ms 2000 --idle-timeout-ms 5000
  --out "$WORK/tables.md"
)
[ -n "$WARM_SECS" ] && CLIENT_FLAGS+=(--warm-secs "$WARM_SECS")
[ "$TLS" = 1 ] && CLIENT_FLAGS+=(--tls-ca "$WORK/cert.pem" --key-update-every "$KEY_UPDATE_EVERY")
STARTED=$(date -u '+%Y-%m-%d %H:%M UTC')
set +e
# The client bounds itself; `timeout` is the backstop.
timeout $((SECS + 400)) "${PIN_CLIENT[@]}" "$BIN/soak_client" "${CLIENT_FLAGS[@]}"
CLIENT_RC=$?
set -e

# A graceful stop: SIGTERM, exit status 0, and its summary says no block is still rented.
kill -TERM "$SERVER_PID" 2>/dev/null || true
SERVER_RC=
for _ in $(seq 100); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    set +e
    wait "$SERVER_PID"
    SERVER_RC=$?
    set -e
    break
  fi
  sleep 0.1
done
SUMMARY=$(grep 'server-demo: served' "$WORK/server.log" | tail -n 1 || true)
STOP_PASS=pass
if [ "$SERVER_RC" != 0 ] || ! grep -q ' 0 blocks still rented' <<<"$SUMMARY"; then
  STOP_PASS="**FAIL**"
fi
echo "soak.sh: server stopped with status ${SERVER_RC:-none (still running after 10 s)}: $SUMMARY"

RESULT=PASS
if [ "$CLIENT_RC" != 0 ] || [ "$STOP_PASS" != pass ]; then
  RESULT=FAIL
fi

if [ "$REPORT" != - ]; then
  # REVISION: for a tree exported from git (git archive), which has no .git to ask.
  REV=${REVISION:-}
  if [ -z "$REV" ]; then
    REV=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ -n "$(git status --porcelain -- Cargo.lock pool http-codec uring tls ws server server-demo benches 2>/dev/null)" ]; then
      REV="$REV (with uncommitted changes)"
    fi
  fi
  COMMAND="benches/load/soak.sh${ARGS[*]:+ ${ARGS[*]}}"
  NICENESS=$(nice)
  [ "$NICENESS" != 0 ] && COMMAND="nice -n $NICENESS $COMMAND"
  CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  MACHINE="${CPU:-unknown CPU}, $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), linux $(uname -r)"
  if [ -s "$WORK/tables.md" ]; then
    TABLES=$(cat "$WORK/tables.md")
  else
    TABLES=$(printf '%s\n\n%s\n%s' "The client wrote no tables (exit status $CLIENT_RC)." \
      '| check | measured | limit | result |' '|---|---|---|---|')
  fi
  TLS_LINE=
  TITLE="the fault soak"
  if [ "$TLS" = 1 ]; then
    TITLE="the fault soak over HTTPS"
    TLS_LINE="
HTTPS: \`cert.pem\` and \`key.pem\` are an ECDSA P-256 certificate for 127.0.0.1 and its key, made with
openssl at the start;
every client connection TLS 1.3 (\`soak_client --tls-ca cert.pem --key-update-every $KEY_UPDATE_EVERY\`)."
  fi
  cat >"$REPORT" <<EOF
# Reliability: $TITLE

\`benches/load/soak.sh\` runs the release server-demo on loopback for a bounded time under a
mix of good and hostile clients (\`soak_client\`), checks every answer byte for byte, and then
checks that the server came back to where it started: no block rented, no descriptor open,
no memory gained, still answering. How it works and what each row means:
[\`benches/load/README.md\`](benches/load/README.md#the-fault-soak).

**Result: $RESULT**

Produced by \`$COMMAND\` on $STARTED, git revision \`$REV\`.
Machine: $MACHINE; $PINNING.
Server: \`server-demo --addr 127.0.0.1:0 ${SERVER_FLAGS[*]//"$WORK/"/}\`.$TLS_LINE

$TABLES
| graceful stop (SIGTERM): exit status, blocks still rented | ${SERVER_RC:-still running}; \`${SUMMARY#server-demo: }\` | 0; 0 blocks | $STOP_PASS |
EOF
  echo "soak.sh: wrote $REPORT"
fi

echo "soak.sh: $RESULT"
[ "$RESULT" = PASS ]
