#!/usr/bin/env bash
# The WebSocket load harness: echo servers (bufslab's, once it exists, and the tokio-tungstenite
# and fastwebsockets peers) under ws_load, one command.
# Usage and the meaning of every column: benches/load/README.md, or `ws.sh --help`.
set -Eeuo pipefail

usage() {
  cat <<'EOF'
usage: benches/load/ws.sh [flags]

Builds the release binaries, then for each round, message size and server starts the server
pinned to one CPU, warms it up, drives it with ws_load pinned to another CPU, and records
messages/s, p50/p99 latency, the server's CPU time per echoed message (user + system from
/proc/PID/stat, before and after the measured run) and the client's CPU share. Prints medians
over the rounds, the servers side by side per size.

  --rounds N          rounds of every size and server (env ROUNDS, default 3)
  --duration S        seconds per measured run (env DURATION, default 5)
  --warmup S          seconds of load before each measured run (env WARMUP, default 1)
  --sizes LIST        comma-separated payload sizes, K for KiB (env SIZES, default 32,4K,64K)
  --connections N     connections per run (env CONNECTIONS, default 64)
  --window N          messages in flight per connection (env WINDOW, default 1)
  --servers LIST      comma-separated, from: bufslab-ws,tungstenite,fastwebsockets
                      (env SERVERS, default all; bufslab-ws is skipped, saying why, where
                      its server is not built)
  --workers N         worker threads of every server (env WORKERS, default 1)
  --server-cpu LIST   CPUs the server is pinned to, as taskset -c takes them (env SERVER_CPU,
                      default 0)
  --client-cpu LIST   CPUs ws_load is pinned to; one client thread per CPU (env CLIENT_CPU,
                      default 1)
  --path PATH         request target of the upgrade (env WS_PATH, default /ws)
  --out DIR           where raw results and logs go (env OUT, default
                      $CARGO_TARGET_DIR/load-results/ws-<time>)
  --no-build          use the binaries already built (env BUILD=0)
  -h, --help          this text

Servers: tungstenite = ws_tungstenite (tokio-tungstenite, its README's echo server);
fastwebsockets = ws_fastwebsockets (fastwebsockets over a hyper upgrade, its echo example);
bufslab-ws = bufslab-server's WebSocket echo: BUFSLAB_WS_BIN (default the example
target/release/examples/ws_echo) with BUFSLAB_WS_FLAGS (default none; where set, used once that
binary's --help names the first flag).
EOF
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
SIZES=${SIZES:-32,4K,64K}
CONNECTIONS=${CONNECTIONS:-64}
WINDOW=${WINDOW:-1}
SERVERS=${SERVERS:-bufslab-ws,tungstenite,fastwebsockets}
WORKERS=${WORKERS:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
WS_PATH=${WS_PATH:-/ws}
OUT=${OUT:-}
BUILD=${BUILD:-1}

PROG=ws.sh
# shellcheck source=benches/load/common.sh
. "$here/common.sh"
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) need_value "$@"; ROUNDS=$2; shift 2 ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --warmup) need_value "$@"; WARMUP=$2; shift 2 ;;
    --sizes) need_value "$@"; SIZES=$2; shift 2 ;;
    --connections) need_value "$@"; CONNECTIONS=$2; shift 2 ;;
    --window) need_value "$@"; WINDOW=$2; shift 2 ;;
    --servers) need_value "$@"; SERVERS=$2; shift 2 ;;
    --workers) need_value "$@"; WORKERS=$2; shift 2 ;;
    --server-cpu) need_value "$@"; SERVER_CPU=$2; shift 2 ;;
    --client-cpu) need_value "$@"; CLIENT_CPU=$2; shift 2 ;;
    --path) need_value "$@"; WS_PATH=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown flag $1" ;;
  esac
done

for v in ROUNDS DURATION WARMUP CONNECTIONS WINDOW WORKERS; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((ROUNDS > 0 && DURATION > 0 && CONNECTIONS > 0 && WINDOW > 0 && WORKERS > 0)) ||
  die "ROUNDS, DURATION, CONNECTIONS, WINDOW and WORKERS must be positive"
[[ $SIZES =~ ^[0-9]+[Kk]?(,[0-9]+[Kk]?)*$ ]] || die "not a size list: '$SIZES' (e.g. 32,4K,64K)"
IFS=, read -r -a sizes <<<"$SIZES"
IFS=, read -r -a servers <<<"$SERVERS"
for s in "${servers[@]}"; do
  [[ $s =~ ^(bufslab-ws|tungstenite|fastwebsockets)$ ]] || die "unknown server '$s'"
done

command -v taskset >/dev/null || die "taskset is missing (package util-linux)"
taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot pin to CPU $SERVER_CPU (see nproc)"
taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot pin to CPU $CLIENT_CPU (see nproc)"
# One ws_load thread per client CPU, as run.sh gives wrk one thread per CPU.
client_threads=$(taskset -c "$CLIENT_CPU" nproc)
clk_tck=$(getconf CLK_TCK)

# --- build ----------------------------------------------------------------------------------

target_dir=${CARGO_TARGET_DIR:-$root/target}
[[ $target_dir == /* ]] || target_dir=$root/$target_dir
bin=$target_dir/release
want_server() {
  local s
  for s in "${servers[@]}"; do [[ $s == "$1" ]] && return 0; done
  return 1
}
if [[ $BUILD == 1 ]]; then
  note "building release binaries (cargo build --release) into $target_dir"
  (cd "$root" && CARGO_TARGET_DIR=$target_dir cargo build --release -q -p bufslab-benches \
    --bin ws_load --bin ws_tungstenite --bin ws_fastwebsockets)
  if want_server bufslab-ws && [[ -z ${BUFSLAB_WS_BIN:-} ]]; then
    (cd "$root" && CARGO_TARGET_DIR=$target_dir cargo build --release -q -p bufslab-server --example ws_echo)
  fi
fi
for b in ws_load ws_tungstenite ws_fastwebsockets; do
  [[ -x $bin/$b ]] || die "$bin/$b is missing: run without --no-build"
done

# ---------------------------------------------------------------------------------------------
# bufslab's WebSocket echo server: a command that listens on the --addr it is given, prints
# `listening on http://127.0.0.1:PORT`, and echoes every text and binary message on WS_PATH.
# Another binary can stand in with BUFSLAB_WS_BIN and BUFSLAB_WS_FLAGS; one whose --help does
# not name the first flag is skipped with a message and the peers still run.
BUFSLAB_WS_BIN=${BUFSLAB_WS_BIN:-$bin/examples/ws_echo}
BUFSLAB_WS_FLAGS=${BUFSLAB_WS_FLAGS:-}
read -r -a bufslab_ws_flags <<<"$BUFSLAB_WS_FLAGS"
bufslab_ws_refusal() {
  [[ -x $BUFSLAB_WS_BIN ]] || { echo "$BUFSLAB_WS_BIN is not built"; return; }
  local flag=${bufslab_ws_flags[0]:-}
  [[ -z $flag ]] && return
  "$BUFSLAB_WS_BIN" --help 2>&1 | grep -q -- "$flag" ||
    echo "$BUFSLAB_WS_BIN has no $flag flag yet (its WebSocket echo has not landed)"
}
# ---------------------------------------------------------------------------------------------

skipped=()
if want_server bufslab-ws; then
  why=$(bufslab_ws_refusal)
  if [[ -n $why ]]; then
    note "bufslab-ws: skipped: $why"
    skipped+=("bufslab-ws: skipped: $why")
    kept=()
    for s in "${servers[@]}"; do [[ $s == bufslab-ws ]] || kept+=("$s"); done
    servers=("${kept[@]}")
  fi
fi
((${#servers[@]} > 0)) || die "no server left to measure"

if [[ -z $OUT ]]; then
  OUT=$target_dir/load-results/ws-$(date +%Y%m%d-%H%M%S)
fi
mkdir -p "$OUT"
results=$OUT/results.tsv
printf 'round\tsize\tserver\tmessages\tduration_us\tmps\tp50_us\tp99_us\tcpu_us_per_msg\tserver_cpu_pct\tclient_cpu_pct\tclient_us_per_msg\n' >"$results"

# --- processes ------------------------------------------------------------------------------

SERVER_PID=
SERVER_PORT=
cleanup() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'note "failed at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

# start_server NAME LOG: WORKERS workers on SERVER_CPU, on a port the kernel picks (a fixed
# port with SO_REUSEPORT could silently join a stray server and share its load).
start_server() {
  local name=$1 log=$2
  local -a cmd
  case $name in
    bufslab-ws) cmd=("$BUFSLAB_WS_BIN" "${bufslab_ws_flags[@]}" --workers "$WORKERS" --addr 127.0.0.1:0) ;;
    tungstenite) cmd=("$bin/ws_tungstenite" --workers "$WORKERS" --addr 127.0.0.1:0) ;;
    fastwebsockets) cmd=("$bin/ws_fastwebsockets" --workers "$WORKERS" --addr 127.0.0.1:0) ;;
  esac
  : >"$log"
  taskset -c "$SERVER_CPU" "${cmd[@]}" >"$log" 2>&1 &
  SERVER_PID=$!
  SERVER_PORT=
  local i
  for ((i = 0; i < 600; i++)); do
    SERVER_PORT=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$log")
    [[ -n $SERVER_PORT ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "$name exited at start: $(cat "$log")"
    sleep 0.05
  done
  [[ -n $SERVER_PORT ]] || die "$name did not report its port: see $log"
}

stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# utime and stime of the whole process (all threads), in clock ticks; the command name in
# field 2 is cut off first, since it could hold spaces.
cpu_ticks() {
  local stat
  stat=$(<"/proc/$1/stat")
  stat=${stat##*) }
  local -a f
  read -r -a f <<<"$stat"
  echo "${f[11]} ${f[12]}"
}

# ws_run SECS SIZE: ws_load against the current server; prints its output.
ws_run() {
  taskset -c "$CLIENT_CPU" "$bin/ws_load" --addr "127.0.0.1:$SERVER_PORT" --path "$WS_PATH" \
    --connections "$CONNECTIONS" --window "$WINDOW" --size "$2" --duration "$1" \
    --threads "$client_threads"
}

ws_field() { sed -n "s/^WSRESULT.* $2=\([0-9-]*\).*/\1/p" <<<"$1"; }

# --- load -----------------------------------------------------------------------------------

run_load() {
  local round name size order i log out t0 t1 u0 s0 u1 s1
  for ((round = 1; round <= ROUNDS; round++)); do
    # Alternate which server goes first, so a drift in the machine's load hits all alike.
    order=("${servers[@]}")
    if ((round % 2 == 0)); then
      order=()
      for ((i = ${#servers[@]} - 1; i >= 0; i--)); do order+=("${servers[i]}"); done
    fi
    for size in "${sizes[@]}"; do
      for name in "${order[@]}"; do
        log=$OUT/server-$name-$size-r$round.log
        start_server "$name" "$log"
        if ((WARMUP > 0)); then
          ws_run "$WARMUP" "$size" >"$OUT/ws-$name-$size-r$round-warmup.txt" 2>&1 ||
            die "warm-up ws_load failed: see $OUT/ws-$name-$size-r$round-warmup.txt"
        fi
        read -r u0 s0 < <(cpu_ticks "$SERVER_PID")
        t0=$EPOCHREALTIME
        out=$(ws_run "$DURATION" "$size" 2>&1) || die "ws_load against $name failed: $out"
        t1=$EPOCHREALTIME
        read -r u1 s1 < <(cpu_ticks "$SERVER_PID")
        printf '%s\n' "$out" >"$OUT/ws-$name-$size-r$round.txt"
        kill -0 "$SERVER_PID" 2>/dev/null || die "$name died during the run: see $log"
        stop_server
        local msgs dur p50 p99 ccpu
        msgs=$(ws_field "$out" messages)
        dur=$(ws_field "$out" duration_us)
        p50=$(ws_field "$out" p50_us)
        p99=$(ws_field "$out" p99_us)
        ccpu=$(ws_field "$out" client_cpu_pct)
        [[ -n $msgs && $msgs -gt 0 ]] || die "no echo completed: see $OUT/ws-$name-$size-r$round.txt"
        # The server's CPU covers the whole ws_load run (handshakes and closes of
        # CONNECTIONS connections included, a few ms), divided by the messages echoed in
        # the measured DURATION.
        awk -v r="$round" -v sz="$size" -v n="$name" -v m="$msgs" -v dur="$dur" -v p50="$p50" \
          -v p99="$p99" -v cc="$ccpu" -v ticks=$((u1 - u0 + s1 - s0)) -v hz="$clk_tck" \
          -v t0="$t0" -v t1="$t1" 'BEGIN {
            printf "%d\t%s\t%s\t%d\t%d\t%.0f\t%d\t%d\t%.3f\t%.0f\t%s\t%.3f\n", r, sz, n, m, dur,
              m * 1e6 / dur, p50, p99, ticks * 1e6 / hz / m, 100 * ticks / hz / (t1 - t0), cc,
              (cc < 0 ? -1 : cc / 100 * dur / m)
          }' >>"$results"
        tail -n 1 "$results" | awk -F'\t' '{
            printf "  round %s  %-4s  %-14s  %9.0f msg/s  p50 %6d us  p99 %6d us  CPU/msg %.2f us  (server CPU %s%%; client CPU %s%%, %.2f us/msg)\n",
              $1, $2, $3, $6, $7, $8, $9, $10, $11, $12
          }'
      done
    done
  done
}

# Medians per size and server, servers side by side, then each server's CPU per message
# against the first server of the list that ran.
print_table() {
  awk -F'\t' -v order="${sizes[*]}" -v sorder="${servers[*]}" "$AWK_MEDIAN"'
    NR > 1 {
      k = $2 SUBSEP $3
      mps[k] = mps[k] " " $6; p50[k] = p50[k] " " $7; p99[k] = p99[k] " " $8
      cpu[k] = cpu[k] " " $9; spct[k] = spct[k] " " $10; cpct[k] = cpct[k] " " $11
      cus[k] = cus[k] " " $12; runs[k]++
    }
    END {
      nz = split(order, sz, " "); nv = split(sorder, sv, " ")
      printf "| size | server | messages/s | p50 | p99 | server CPU us/message | vs %s | server CPU | client CPU | client CPU us/message | runs |\n", sv[1]
      printf "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
      for (i = 1; i <= nz; i++) {
        base = ""
        for (j = 1; j <= nv; j++) {
          k = sz[i] SUBSEP sv[j]
          if (!(k in runs)) continue
          c = median(cpu[k])
          if (base == "") base = c
          printf "| %s | %s | %.0f | %d us | %d us | %.2f | %.2fx | %.0f%% | %.0f%% | %.2f | %d |\n",
            sz[i], sv[j], median(mps[k]), median(p50[k]), median(p99[k]), c,
            (base > 0 ? c / base : 0), median(spct[k]), median(cpct[k]), median(cus[k]), runs[k]
        }
      }
    }' "$results"
}

note "out: $OUT"
run_load
{
  echo "WebSocket echo: $CONNECTIONS connections, window $WINDOW, ${DURATION}s per run, median of $ROUNDS;"
  echo "server on CPU $SERVER_CPU ($WORKERS worker(s)), ws_load on CPU $CLIENT_CPU; $(lscpu | sed -n 's/^Model name: *//p')"
  echo
  print_table
  for s in "${skipped[@]}"; do echo "$s"; done
} | tee "$OUT/table.md"
