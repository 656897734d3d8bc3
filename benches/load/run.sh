#!/usr/bin/env bash
# The load harness: server-demo (epoll and io_uring drivers) against hyper 1.x and may-minihttp
# baselines and a do-nothing floor server under wrk (and ab for a new connection per request),
# one command.
# Usage and the meaning of every column: benches/load/README.md, or `run.sh --help`.
set -Eeuo pipefail

usage() {
  cat <<'EOF'
usage: benches/load/run.sh [flags]

Builds the release binaries, then for each round and scenario starts each server pinned to
one CPU, warms it up, drives it with `wrk` (or `ab` for newconn) pinned to another CPU, and
records requests/s, p50/p99 latency and the server's CPU time per request. Then RSS per idle
keep-alive connection, syscalls per request (strace) and instructions per request (callgrind).
Prints medians over the rounds and the ratios between servers.

  --rounds N          rounds of every scenario and server (env ROUNDS, default 3)
  --duration S        seconds per measured wrk run (env DURATION, default 10)
  --warmup S          seconds of wrk before each measured run (env WARMUP, default 3)
  --scenarios LIST    comma-separated, from: pipelined,plaintext,json,c1024,newconn
                      (env SCENARIOS, default all)
  --servers LIST      comma-separated, from: server-demo,demo-uring,demo-stack,demo-prev,prev-uring,
                      hyper,may-minihttp,floor
                      (env SERVERS, default all)
  --parts LIST        comma-separated, from: load,rss,syscalls,instructions (env PARTS,
                      default all)
  --idle-conns N      idle keep-alive connections for the RSS part (env IDLE_CONNS, default 10000)
  --strace-secs S     seconds of wrk under strace (env STRACE_SECS, default 3)
  --instr-secs S      seconds of wrk against each server under callgrind (env INSTR_SECS,
                      default 5)
  --instr-scenarios L comma-separated, from: plaintext,json,pipelined: what the instructions
                      part sends, 16 connections each (env INSTR_SCENARIOS, default plaintext)
  --workers N         worker threads of every server but the floor (env WORKERS, default 1)
  --server-cpu LIST   CPUs the server is pinned to, as taskset -c takes them: 0 or 0-3 or 0,2
                      (env SERVER_CPU, default 0)
  --client-cpu LIST   CPUs wrk, ab and idle_conns are pinned to; wrk runs one thread per CPU
                      here (env CLIENT_CPU, default 1)
  --out DIR           where raw results and logs go (env OUT, default
                      $CARGO_TARGET_DIR/load-results/<time>)
  --no-build          use the binaries already built (env BUILD=0)
  -h, --help          this text

Scenarios: pipelined = GET /plaintext, 256 connections, 16 requests pipelined per connection;
plaintext = GET /plaintext, 64 connections; json = GET /json, 64 connections;
c1024 = GET /plaintext, 1024 connections; newconn = GET /plaintext, a new connection per
request, 256 at a time (ab -c 256, HTTP/1.0 without keep-alive; the floor is left out).

Servers: server-demo = server-demo --io epoll (the pool's queue free list, its default);
demo-uring = server-demo --io uring (left out, with the reason, where io_uring is refused);
demo-stack = server-demo --io epoll --pool-strategy stack (the free-list A/B against
server-demo); demo-prev = the server-demo binary in PREV_DEMO (another revision, built
elsewhere), --io epoll, paired against server-demo; prev-uring = the same binary --io uring,
paired against demo-uring; hyper, may-minihttp, floor = the baselines.
EOF
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-3}
SCENARIOS=${SCENARIOS:-pipelined,plaintext,json,c1024,newconn}
SERVERS=${SERVERS:-server-demo,demo-uring,demo-stack,hyper,may-minihttp,floor}
PARTS=${PARTS:-load,rss,syscalls,instructions}
IDLE_CONNS=${IDLE_CONNS:-10000}
STRACE_SECS=${STRACE_SECS:-3}
INSTR_SECS=${INSTR_SECS:-5}
INSTR_SCENARIOS=${INSTR_SCENARIOS:-plaintext}
WORKERS=${WORKERS:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
OUT=${OUT:-}
BUILD=${BUILD:-1}

PROG=run.sh
# shellcheck source=benches/load/common.sh
. "$here/common.sh"
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) need_value "$@"; ROUNDS=$2; shift 2 ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --warmup) need_value "$@"; WARMUP=$2; shift 2 ;;
    --scenarios) need_value "$@"; SCENARIOS=$2; shift 2 ;;
    --servers) need_value "$@"; SERVERS=$2; shift 2 ;;
    --parts) need_value "$@"; PARTS=$2; shift 2 ;;
    --idle-conns) need_value "$@"; IDLE_CONNS=$2; shift 2 ;;
    --strace-secs) need_value "$@"; STRACE_SECS=$2; shift 2 ;;
    --instr-secs) need_value "$@"; INSTR_SECS=$2; shift 2 ;;
    --instr-scenarios) need_value "$@"; INSTR_SCENARIOS=$2; shift 2 ;;
    --workers) need_value "$@"; WORKERS=$2; shift 2 ;;
    --server-cpu) need_value "$@"; SERVER_CPU=$2; shift 2 ;;
    --client-cpu) need_value "$@"; CLIENT_CPU=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown flag $1" ;;
  esac
done

for v in ROUNDS DURATION WARMUP IDLE_CONNS STRACE_SECS INSTR_SECS WORKERS; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((ROUNDS > 0 && DURATION > 0 && WORKERS > 0)) || die "ROUNDS, DURATION and WORKERS must be positive"

# cpu_list LIST: the CPUs of a taskset-style list (0-3,6), one per line.
cpu_list() {
  local part a b
  local -a list
  [[ $1 =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] || die "not a CPU list: '$1' (e.g. 0 or 0-3 or 0,2)"
  IFS=, read -r -a list <<<"$1"
  for part in "${list[@]}"; do
    a=${part%-*} b=${part#*-}
    for ((; a <= b; a++)); do echo "$a"; done
  done
}
server_cpus=$(cpu_list "$SERVER_CPU")
client_cpus=$(cpu_list "$CLIENT_CPU")
[[ -z $(comm -12 <(sort <<<"$server_cpus") <(sort <<<"$client_cpus")) ]] ||
  die "server CPUs ($SERVER_CPU) and client CPUs ($CLIENT_CPU) overlap"
# One wrk thread per client CPU.
wrk_threads=$(wc -l <<<"$client_cpus")

IFS=, read -r -a scenarios <<<"$SCENARIOS"
IFS=, read -r -a servers <<<"$SERVERS"
IFS=, read -r -a parts <<<"$PARTS"
IFS=, read -r -a instr_scenarios <<<"$INSTR_SCENARIOS"
for s in "${instr_scenarios[@]}"; do
  [[ $s =~ ^(plaintext|json|pipelined)$ ]] || die "unknown instructions scenario '$s'"
done
for s in "${scenarios[@]}"; do
  [[ $s =~ ^(pipelined|plaintext|json|c1024|newconn)$ ]] || die "unknown scenario '$s'"
done
for s in "${servers[@]}"; do
  [[ $s =~ ^(server-demo|demo-uring|demo-stack|demo-prev|prev-uring|hyper|may-minihttp|floor)$ ]] || die "unknown server '$s'"
  if [[ $s == demo-prev || $s == prev-uring ]]; then
    [[ -x ${PREV_DEMO:-} ]] || die "$s needs PREV_DEMO=<a server-demo binary of another revision>"
  fi
done
want_scenario() {
  local s
  for s in "${scenarios[@]}"; do [[ $s == "$1" ]] && return 0; done
  return 1
}
want_part() {
  local p
  for p in "${parts[@]}"; do [[ $p == "$1" ]] && return 0; done
  return 1
}
for p in "${parts[@]}"; do
  [[ $p =~ ^(load|rss|syscalls|instructions)$ ]] || die "unknown part '$p'"
done

# --- tools ----------------------------------------------------------------------------------

apt_install() {
  local -a sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || return 1
    sudo=(sudo)
  fi
  command -v apt-get >/dev/null || return 1
  note "installing $* with apt-get"
  "${sudo[@]}" apt-get install -y "$@" >/dev/null 2>&1 ||
    { "${sudo[@]}" apt-get update >/dev/null 2>&1 && "${sudo[@]}" apt-get install -y "$@" >/dev/null 2>&1; }
}
need_tool() { # command package
  command -v "$1" >/dev/null && return 0
  apt_install "$2" && command -v "$1" >/dev/null
}
need_tool wrk wrk || die "wrk is missing and apt-get could not install it"
need_tool taskset util-linux || die "taskset is missing (package util-linux)"
need_tool curl curl || die "curl is missing and apt-get could not install it"
if want_scenario newconn; then
  need_tool ab apache2-utils || die "ab is missing (package apache2-utils), needed by the newconn scenario"
fi
if want_part syscalls && ! need_tool strace strace; then
  note "strace is missing and apt-get could not install it: skipping the syscall part"
  parts=("${parts[@]/syscalls/}")
fi
if want_part instructions && ! need_tool callgrind_control valgrind; then
  note "valgrind is missing and apt-get could not install it: skipping the instructions part"
  parts=("${parts[@]/instructions/}")
fi
taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot pin to CPU $SERVER_CPU (see nproc)"
taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot pin to CPU $CLIENT_CPU (see nproc)"
clk_tck=$(getconf CLK_TCK)

# Every server and client started below inherits this limit: 1024 wrk connections, and the
# RSS part's idle connections on both the server and the idle_conns side.
want_fds=$((IDLE_CONNS + 1024 > 20000 ? IDLE_CONNS + 1024 : 20000))
hard_fds=$(ulimit -Hn)
if [[ $hard_fds != unlimited ]] && ((hard_fds < want_fds)); then
  want_fds=$hard_fds
fi
if ! ulimit -n "$want_fds" 2>/dev/null; then
  note "WARNING: cannot raise the open-file limit to $want_fds (soft $(ulimit -Sn), hard $hard_fds)"
fi
soft_fds=$(ulimit -Sn)
if want_part rss && ((soft_fds < IDLE_CONNS + 64)); then
  note "WARNING: open-file limit is $soft_fds, below the $((IDLE_CONNS + 64)) that $IDLE_CONNS idle"
  note "WARNING: connections need: the RSS part uses $((soft_fds - 64)) connections instead"
  IDLE_CONNS=$((soft_fds - 64))
fi
if ((soft_fds < 1100)); then
  note "WARNING: open-file limit $soft_fds is below 1100: the c1024 scenario will fail"
fi

# --- build ----------------------------------------------------------------------------------

target_dir=${CARGO_TARGET_DIR:-$root/target}
[[ $target_dir == /* ]] || target_dir=$root/$target_dir
bin=$target_dir/release
if [[ $BUILD == 1 ]]; then
  note "building release binaries (cargo build --release) into $target_dir"
  (cd "$root" && CARGO_TARGET_DIR=$target_dir cargo build --release -q -p server-demo --bin server-demo)
  (cd "$root" && CARGO_TARGET_DIR=$target_dir cargo build --release -q -p bufslab-benches \
    --bin hyper_baseline --bin may_baseline --bin floor_server --bin idle_conns)
fi
for b in server-demo hyper_baseline may_baseline floor_server idle_conns; do
  [[ -x $bin/$b ]] || die "$bin/$b is missing: run without --no-build"
done

if [[ -z $OUT ]]; then
  OUT=$target_dir/load-results/$(date +%Y%m%d-%H%M%S)
fi
mkdir -p "$OUT"
results=$OUT/results.tsv
printf 'round\tscenario\tserver\trequests\tduration_us\trps\tp50_us\tp99_us\terrors\tuser_us_per_req\tsys_us_per_req\tserver_cpu_pct\n' >"$results"

# --- processes ------------------------------------------------------------------------------

SERVER_PID=
SERVER_PORT=
server_wrap=()
IDLE_PID=
STRACE_PID=
cleanup() {
  local p
  for p in "$STRACE_PID" "$IDLE_PID" "$SERVER_PID"; do
    if [[ -n $p ]]; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
}
trap cleanup EXIT
trap 'note "failed at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

# start_server NAME LOG [EXTRA FLAGS...]: WORKERS workers on SERVER_CPU, on a port the kernel picks,
# run under the command in the array server_wrap if it is set (the instructions part: callgrind).
# Port 0 rather than a fixed one: both servers use SO_REUSEPORT, so a fixed port would let
# them silently join a stray server already listening there and share its load.
start_server() {
  local name=$1 log=$2
  shift 2
  local -a cmd
  case $name in
    server-demo) cmd=("$bin/server-demo" --workers "$WORKERS" --addr 127.0.0.1:0 --io epoll) ;;
    demo-uring) cmd=("$bin/server-demo" --workers "$WORKERS" --addr 127.0.0.1:0 --io uring) ;;
    demo-stack) cmd=("$bin/server-demo" --workers "$WORKERS" --addr 127.0.0.1:0 --io epoll --pool-strategy stack) ;;
    demo-prev) cmd=("$PREV_DEMO" --workers "$WORKERS" --addr 127.0.0.1:0 --io epoll) ;;
    prev-uring) cmd=("$PREV_DEMO" --workers "$WORKERS" --addr 127.0.0.1:0 --io uring) ;;
    hyper) cmd=("$bin/hyper_baseline" --workers "$WORKERS" --addr 127.0.0.1:0) ;;
    may-minihttp) cmd=("$bin/may_baseline" --workers "$WORKERS" --addr 127.0.0.1:0) ;;
    floor) cmd=("$bin/floor_server" --addr 127.0.0.1:0) ;;
  esac
  : >"$log"
  taskset -c "$SERVER_CPU" "${server_wrap[@]}" "${cmd[@]}" "$@" >"$log" 2>&1 &
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
  curl -fsS -o /dev/null "http://127.0.0.1:$SERVER_PORT/plaintext" ||
    die "$name does not answer GET /plaintext: see $log"
  # The driver server-demo runs is the one /stats names, not the one asked for.
  local want=
  case $name in server-demo | demo-stack | demo-prev) want=epoll ;; demo-uring | prev-uring) want=uring ;; esac
  if [[ -n $want ]]; then
    curl -fsS "http://127.0.0.1:$SERVER_PORT/stats" | grep -q "\"driver\":\"$want\"" ||
      die "$name: /stats does not name the $want driver: see $log"
  fi
}

# uring_refusal: empty when `server-demo --io uring` starts here, else the reason it gave.
# An explicit --io uring that cannot start exits with status 2 and the reason on stderr.
uring_refusal() {
  local log=$OUT/server-demo-uring-probe.log pid i
  "$bin/server-demo" --workers 1 --addr 127.0.0.1:0 --io uring >"$log" 2>&1 &
  pid=$!
  for ((i = 0; i < 100; i++)); do
    if grep -q 'listening on' "$log"; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  head -n 1 "$log"
  [[ -s $log ]] || echo "no output in 5 s"
}

stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  # A server that does not stop within 10 s is killed: the io_uring driver under valgrind
  # can sleep through the signal (valgrind does not model io_uring waits).
  (sleep 10 && kill -KILL "$SERVER_PID" 2>/dev/null) &
  local watchdog=$!
  wait "$SERVER_PID" 2>/dev/null || true
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  SERVER_PID=
}

# utime and stime of the whole process (all threads), in clock ticks. The command name in
# field 2 is cut off first: it is in parentheses and could hold spaces.
cpu_ticks() {
  local stat
  stat=$(<"/proc/$1/stat")
  stat=${stat##*) }
  local -a f
  read -r -a f <<<"$stat"
  echo "${f[11]} ${f[12]}"
}

vm_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# wrk_run SECS CONNS PATH SCRIPT [DEPTH]: prints wrk's output.
wrk_run() {
  local secs=$1 conns=$2 path=$3 script=$4 depth=${5:-}
  local -a args=()
  [[ -n $depth ]] && args=(-- "$depth")
  taskset -c "$CLIENT_CPU" wrk -t"$wrk_threads" -c"$conns" -d"${secs}s" --timeout 5s -s "$script" \
    "http://127.0.0.1:$SERVER_PORT$path" "${args[@]}"
}

# ab_run SECS CONNS PATH: a new connection per request (ab speaks HTTP/1.0 without keep-alive,
# so the server closes after each response) for SECS seconds, CONNS at a time. Prints ab's
# output and then a WRKRESULT line like report.lua's: p50 and p99 from ab's percentile table
# (-e, in ms with 3 decimals) of each request's whole time, connect included; errors = ab's
# failed and non-2xx responses. -n only raises ab's cap of 50,000 requests under -t; -r keeps
# it going past a reset.
ab_run() {
  local secs=$1 conns=$2 path=$3 csv out rc=0
  csv=$(mktemp "$OUT/ab-XXXXXX.csv")
  out=$(timeout $((secs + 60)) taskset -c "$CLIENT_CPU" ab -r -q -t "$secs" -n 1000000 -c "$conns" \
    -e "$csv" "http://127.0.0.1:$SERVER_PORT$path" 2>&1) || rc=$?
  printf '%s\n' "$out"
  if ((rc == 0)); then
    awk -F, 'FNR == NR {
        if ($1 == 50) p50 = $2 * 1000
        if ($1 == 99) p99 = $2 * 1000
        next
      }
      /^Complete requests:/ { req = $3 }
      /^Failed requests:/ { err += $3 }
      /^Non-2xx responses:/ { err += $3 }
      /^Time taken for tests:/ { dur = $5 * 1e6 }
      END { printf "WRKRESULT requests=%d duration_us=%.0f p50_us=%.0f p99_us=%.0f errors=%d\n", req, dur, p50, p99, err }' \
      FS=, "$csv" FS=' ' <(printf '%s\n' "$out")
  fi
  rm -f "$csv"
  return "$rc"
}

# load_run SECS: the current scenario (see `scenario`) for SECS seconds with its tool.
load_run() {
  if [[ $S_TOOL == ab ]]; then
    ab_run "$1" "$S_CONNS" "$S_PATH"
  else
    wrk_run "$1" "$S_CONNS" "$S_PATH" "$S_SCRIPT" "$S_DEPTH"
  fi
}

# wrk_field OUTPUT NAME: a value from the WRKRESULT line the Lua `done` writes.
wrk_field() { sed -n "s/^WRKRESULT.* $2=\([0-9]*\).*/\1/p" <<<"$1"; }

# Sets S_TOOL, S_CONNS, S_PATH, S_SCRIPT and S_DEPTH for a scenario.
scenario() {
  S_DEPTH=
  S_TOOL=wrk
  S_SCRIPT=$here/report.lua
  case $1 in
    pipelined) S_CONNS=256 S_PATH=/plaintext S_SCRIPT=$here/pipeline.lua S_DEPTH=16 ;;
    plaintext) S_CONNS=64 S_PATH=/plaintext ;;
    json) S_CONNS=64 S_PATH=/json ;;
    c1024) S_CONNS=1024 S_PATH=/plaintext ;;
    newconn) S_TOOL=ab S_CONNS=256 S_PATH=/plaintext ;;
  esac
}

# --- load -----------------------------------------------------------------------------------

run_load() {
  local round name sc order i log out
  for ((round = 1; round <= ROUNDS; round++)); do
    # Alternate which server goes first, so a drift in machine noise hits both alike.
    order=("${servers[@]}")
    if ((round % 2 == 0)); then
      order=()
      for ((i = ${#servers[@]} - 1; i >= 0; i--)); do order+=("${servers[i]}"); done
    fi
    for sc in "${scenarios[@]}"; do
      scenario "$sc"
      for name in "${order[@]}"; do
        # The floor never closes a connection, and ab without keep-alive waits for the close.
        [[ $sc == newconn && $name == floor ]] && continue
        log=$OUT/server-$name-$sc-r$round.log
        start_server "$name" "$log"
        if ((WARMUP > 0)); then
          load_run "$WARMUP" >"$OUT/wrk-$name-$sc-r$round-warmup.txt" 2>&1 ||
            die "warm-up $S_TOOL failed: see $OUT/wrk-$name-$sc-r$round-warmup.txt"
        fi
        local t0 t1 u0 s0 u1 s1
        read -r u0 s0 < <(cpu_ticks "$SERVER_PID")
        t0=$EPOCHREALTIME
        out=$(load_run "$DURATION" 2>&1) || die "$S_TOOL failed: $out"
        t1=$EPOCHREALTIME
        read -r u1 s1 < <(cpu_ticks "$SERVER_PID")
        printf '%s\n' "$out" >"$OUT/wrk-$name-$sc-r$round.txt"
        kill -0 "$SERVER_PID" 2>/dev/null || die "$name died during the run: see $log"
        stop_server
        local req dur p50 p99 err
        req=$(wrk_field "$out" requests)
        dur=$(wrk_field "$out" duration_us)
        p50=$(wrk_field "$out" p50_us)
        p99=$(wrk_field "$out" p99_us)
        err=$(wrk_field "$out" errors)
        [[ -n $req && $req -gt 0 ]] || die "no requests completed: see $OUT/wrk-$name-$sc-r$round.txt"
        awk -v r="$round" -v sc="$sc" -v n="$name" -v req="$req" -v dur="$dur" -v p50="$p50" \
          -v p99="$p99" -v err="$err" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$clk_tck" \
          -v t0="$t0" -v t1="$t1" 'BEGIN {
            rps = req * 1e6 / dur
            uus = u * 1e6 / hz / req
            sus = s * 1e6 / hz / req
            pct = 100 * (u + s) / hz / (t1 - t0)
            printf "%d\t%s\t%s\t%d\t%d\t%.0f\t%d\t%d\t%d\t%.3f\t%.3f\t%.0f\n",
              r, sc, n, req, dur, rps, p50, p99, err, uus, sus, pct
          }' >>"$results"
        tail -n 1 "$results" | awk -F'\t' '
          function lat(us) { return us > 0 ? sprintf("%6d us", us) : "     n/a" }
          {
            printf "  round %s  %-9s  %-11s  %9.0f req/s  p50 %s  p99 %s  CPU/req %.2f + %.2f us  (server CPU %s%%, errors %s)\n",
              $1, $2, $3, $6, lat($7), lat($8), $10, $11, $12, $9
          }'
      done
    done
  done
}

# Medians per scenario and server, then the ratios of medians where both servers ran (server-demo
# and demo-uring against each baseline, demo-uring and demo-stack against server-demo), and for
# demo-uring / server-demo and demo-stack / server-demo also the paired ratios: total CPU per
# request of the two in the same round, their median and their range over the rounds.
print_load_table() {
  awk -F'\t' -v order="${SCENARIOS}" -v sorder="${servers[*]}" "$AWK_MEDIAN"'
    function lat(us) {
      if (us <= 0) return "n/a"
      if (us >= 1000) return sprintf("%.2f ms", us / 1000)
      return sprintf("%d us", us)
    }
    NR > 1 {
      k = $2 SUBSEP $3
      rps[k] = rps[k] " " $6
      # A percentile wrk could not compute (0) is left out, not counted as 0.
      if ($7 > 0) p50[k] = p50[k] " " $7
      if ($8 > 0) p99[k] = p99[k] " " $8
      usr[k] = usr[k] " " $10; sys[k] = sys[k] " " $11; pct[k] = pct[k] " " $12
      err[k] += $9; runs[k]++
      tot[$1, $2, $3] = $10 + $11
    }
    END {
      ns = split(order, sc, ","); nv = split(sorder, sv, " ")
      printf "%-10s %-12s %12s %10s %10s %28s %8s %7s %5s\n", "scenario", "server", "req/s", "p50", "p99", "server CPU/request (us)", "srv CPU", "errors", "runs"
      printf "%-10s %-12s %12s %10s %10s %28s %8s %7s %5s\n", "", "", "", "", "", "user +   sys =  total", "", "", ""
      for (i = 1; i <= ns; i++) {
        for (j = 1; j <= nv; j++) {
          k = sc[i] SUBSEP sv[j]
          if (!(k in runs)) continue
          mu = median(usr[k]); ms = median(sys[k])
          m_rps[k] = median(rps[k]); m_usr[k] = mu; m_sys[k] = ms; m_p99[k] = median(p99[k])
          printf "%-10s %-12s %12.0f %10s %10s %8.2f + %5.2f = %6.2f %7.0f%% %7d %5d\n",
            sc[i], sv[j], m_rps[k], lat(median(p50[k])), lat(m_p99[k]), mu, ms, mu + ms,
            median(pct[k]), err[k], runs[k]
        }
        nb = split("server-demo:hyper server-demo:may-minihttp server-demo:floor demo-uring:hyper demo-uring:may-minihttp demo-uring:floor demo-uring:server-demo demo-stack:server-demo server-demo:demo-prev demo-uring:prev-uring", pair, " ")
        split("demo/hyper demo/may demo/floor uring/hyper uring/may uring/floor uring/epoll stack/queue demo/prev uring/prev", label, " ")
        for (x = 1; x <= nb; x++) {
          split(pair[x], ab, ":")
          a = sc[i] SUBSEP ab[1]
          b = sc[i] SUBSEP ab[2]
          if (!((a in runs) && (b in runs) && m_usr[b] + m_sys[b] > 0)) continue
          p99r = "n/a"
          if (m_p99[b] > 0 && m_p99[a] > 0) p99r = sprintf("%.2fx", m_p99[a] / m_p99[b])
          ur = 0; if (m_usr[b] > 0) ur = m_usr[a] / m_usr[b]
          sr = 0; if (m_sys[b] > 0) sr = m_sys[a] / m_sys[b]
          printf "%-10s %-12s %11.2fx %10s %10s %7.2fx + %4.2fx = %5.2fx\n", sc[i], label[x],
            m_rps[a] / m_rps[b], "", p99r, ur, sr, (m_usr[a] + m_sys[a]) / (m_usr[b] + m_sys[b])
        }
        split("demo-uring:server-demo demo-stack:server-demo server-demo:demo-prev demo-uring:prev-uring", ppair, " ")
        split("uring/epoll stack/queue demo/prev uring/prev", plabel, " ")
        for (x = 1; x <= 4; x++) {
          split(ppair[x], ab, ":")
          paired = ""
          for (r = 1; r <= rounds; r++) {
            if (!(((r, sc[i], ab[1]) in tot) && ((r, sc[i], ab[2]) in tot))) continue
            if (tot[r, sc[i], ab[2]] <= 0) continue
            paired = paired " " tot[r, sc[i], ab[1]] / tot[r, sc[i], ab[2]]
          }
          if (paired == "") continue
          np = split(paired, pv, " ")
          lo = pv[1] + 0; hi = lo
          for (y = 2; y <= np; y++) { if (pv[y] + 0 < lo) lo = pv[y] + 0; if (pv[y] + 0 > hi) hi = pv[y] + 0 }
          printf "%-10s %-12s %54s %5.2fx (%d rounds, %.2fx..%.2fx)\n", sc[i], plabel[x], "paired, total CPU/req: median", median(paired), np, lo, hi
        }
      }
    }' rounds="$ROUNDS" "$results"
}

# --- RSS per idle connection ----------------------------------------------------------------

# RSS of a freshly started, warmed-up server at rest, in kB.
warm_rss() {
  wrk_run 1 64 /plaintext "$here/report.lua" >/dev/null 2>&1 || die "warm-up wrk failed"
  sleep 1
  vm_rss_kb "$SERVER_PID"
}

run_rss() {
  local name before after lean log i
  printf 'server\tconns\trss_before_kb\trss_after_kb\tbytes_per_conn\tlean_rss_kb\tbytes_per_conn_with_slots\n' >"$OUT/rss.tsv"
  for name in "${servers[@]}"; do
    # The floor holds nothing per connection worth measuring.
    [[ $name == floor ]] && continue
    # server-demo preallocates a slot per connection it may ever hold (--max-conns, default
    # 10000) at start, under either driver, so "before" already pays for them. A second start
    # with few slots gives the figure with that preallocation counted per connection.
    lean=
    if [[ $name == server-demo || $name == demo-uring || $name == demo-stack ]]; then
      start_server "$name" "$OUT/server-$name-rss-lean.log" --max-conns 128
      lean=$(warm_rss)
      stop_server
    fi
    log=$OUT/idle-$name.log
    note "RSS: $name, opening $IDLE_CONNS idle connections"
    start_server "$name" "$OUT/server-$name-rss.log"
    before=$(warm_rss)
    : >"$log"
    taskset -c "$CLIENT_CPU" "$bin/idle_conns" --addr "127.0.0.1:$SERVER_PORT" \
      --conns "$IDLE_CONNS" --hold-secs 600 </dev/null >"$log" 2>&1 &
    IDLE_PID=$!
    for ((i = 0; i < 1200; i++)); do
      grep -q '^ready' "$log" && break
      kill -0 "$IDLE_PID" 2>/dev/null || die "idle_conns failed against $name: $(cat "$log")"
      sleep 0.1
    done
    grep -q '^ready' "$log" || die "idle_conns did not get ready in 120 s against $name"
    sleep 1
    after=$(vm_rss_kb "$SERVER_PID")
    kill "$IDLE_PID" 2>/dev/null || true
    wait "$IDLE_PID" 2>/dev/null || true
    IDLE_PID=
    stop_server
    awk -v n="$name" -v c="$IDLE_CONNS" -v b="$before" -v a="$after" -v l="${lean:-$before}" 'BEGIN {
      printf "%s\t%d\t%d\t%d\t%.0f\t%d\t%.0f\n", n, c, b, a, (a - b) * 1024 / c, l, (a - l) * 1024 / c
    }' >>"$OUT/rss.tsv"
  done
  awk -F'\t' 'NR == 1 {
      printf "%-12s %7s %12s %12s %15s %26s\n", "server", "conns", "RSS before", "RSS after", "per conn (delta)", "per conn (with prealloc)"
      next
    }
    { printf "%-12s %7d %9d kB %9d kB %13d B %24d B\n", $1, $2, $3, $4, $5, $7 }' "$OUT/rss.tsv"
}

# --- syscalls per request -------------------------------------------------------------------

# observed_wrk NAME TAG SETTLE CMD...: a fresh server NAME, 1 s of wrk to warm it, then CMD with
# the server's PID appended, in the background; SETTLE seconds for CMD to attach, STRACE_SECS of
# wrk (GET /plaintext, 64 connections, no pipelining), SIGINT to CMD, the server stopped.
# Sets OBS_REQ to the requests wrk completed.
observed_wrk() {
  local name=$1 tag=$2 settle=$3 out
  shift 3
  start_server "$name" "$OUT/server-$name-$tag.log"
  wrk_run 1 64 /plaintext "$here/report.lua" >/dev/null 2>&1 || die "warm-up wrk failed"
  "$@" "$SERVER_PID" 2>"$OUT/$tag-$name.log" &
  STRACE_PID=$!
  sleep "$settle"
  out=$(wrk_run "$STRACE_SECS" 64 /plaintext "$here/report.lua" 2>&1) || die "wrk under $tag failed: $out"
  printf '%s\n' "$out" >"$OUT/wrk-$name-$tag.txt"
  kill -INT "$STRACE_PID" 2>/dev/null || true
  wait "$STRACE_PID" 2>/dev/null || true
  STRACE_PID=
  stop_server
  OBS_REQ=$(wrk_field "$out" requests)
  [[ -n $OBS_REQ && $OBS_REQ -gt 0 ]] || die "no requests completed under $tag: see $OUT/wrk-$name-$tag.txt"
}

# Each server twice: under `strace -c -f`, which names every syscall, then under `perf stat` on
# two tracepoints (all syscalls, io_uring_enter). perf counts in the kernel without stopping the
# server at each syscall as strace does; under strace a driver that makes few syscalls gains on
# wrk, finds more completions per io_uring_enter and shows fewer enters per request than it
# makes unobserved.
run_syscalls() {
  local name trace counts have_perf=0 perf_req perf_all perf_ue
  # Both tracepoints must exist (CONFIG_FTRACE_SYSCALLS) and be open to this user.
  if command -v perf >/dev/null &&
    perf stat -x, -e raw_syscalls:sys_enter -e syscalls:sys_enter_io_uring_enter -- true >/dev/null 2>&1; then
    have_perf=1
  else
    note "perf cannot count the syscall tracepoints here: no counts without strace"
  fi
  printf 'server\trequests\treads\tread_eagain\twrites\tepoll_waits\tio_uring_enters\tall\tperf_requests\tperf_all\tperf_io_uring_enters\n' >"$OUT/syscalls.tsv"
  for name in "${servers[@]}"; do
    note "syscalls: $name under strace for ${STRACE_SECS}s"
    trace=$OUT/strace-$name.txt
    # -f with -p attaches every thread of the process, not only the one named.
    observed_wrk "$name" strace 1 strace -c -f -o "$trace" -p
    # strace -c rows: % time, seconds, usecs/call, calls, [errors], syscall.
    awk -v n="$name" -v req="$OBS_REQ" '
      $1 ~ /^[0-9.]+$/ && $NF != "total" {
        calls = $4; errs = (NF == 6) ? $5 : 0; sc = $NF
        if (sc ~ /^(read|readv|recvfrom|recvmsg|recvmmsg)$/) { rd += calls; eagain += errs }
        else if (sc ~ /^(write|writev|sendto|sendmsg|sendmmsg)$/) wr += calls
        else if (sc ~ /^epoll_(p?wait|pwait2)$/) ep += calls
        else if (sc == "io_uring_enter") ue += calls
        all += calls
      }
      END { printf "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d", n, req, rd, eagain, wr, ep, ue, all }
    ' "$trace" >>"$OUT/syscalls.tsv"
    perf_req=0 perf_all=0 perf_ue=0
    if ((have_perf)); then
      note "syscalls: $name under perf stat for ${STRACE_SECS}s"
      counts=$OUT/perf-syscalls-$name.csv
      observed_wrk "$name" perf 0.5 perf stat -x, -o "$counts" -e raw_syscalls:sys_enter \
        -e syscalls:sys_enter_io_uring_enter -p
      perf_req=$OBS_REQ
      read -r perf_all perf_ue < <(awk -F, '
        $3 == "raw_syscalls:sys_enter" { all = $1 }
        $3 == "syscalls:sys_enter_io_uring_enter" { ue = $1 }
        END { printf "%d %d\n", all, ue }' "$counts")
    fi
    printf '\t%d\t%d\t%d\n' "$perf_req" "$perf_all" "$perf_ue" >>"$OUT/syscalls.tsv"
  done
  awk -F'\t' 'NR == 1 {
      printf "%-12s %9s %10s %14s %10s %14s %18s %10s %12s %19s\n", "server", "requests", "reads/req", "(EAGAIN)/req", "writes/req", "epoll_wait/req", "io_uring_enter/req", "all/req", "all/req", "io_uring_enter/req"
      printf "%-12s %9s %10s %14s %10s %14s %18s %10s %12s %19s\n", "", "", "", "", "", "", "", "", "(perf)", "(perf)"
      next
    }
    {
      r = $2; pa = "-"; pu = "-"
      if ($9 > 0) { pa = sprintf("%.3f", $10 / $9); pu = sprintf("%.3f", $11 / $9) }
      printf "%-12s %9d %10.3f %14.3f %10.3f %14.3f %18.3f %10.3f %12s %19s\n", $1, r, $3 / r, $4 / r, $5 / r, $6 / r, $7 / r, $8 / r, pa, pu
    }' "$OUT/syscalls.tsv"
}

# --- user-space instructions per request ----------------------------------------------------

# Each server under callgrind, which counts every instruction the process executes in user
# space (its own code, its libraries, the syscall wrappers; not the kernel): warmed up, counters
# zeroed, then INSTR_SECS of wrk (16 connections; GET /plaintext, GET /json, or GET /plaintext
# 16 deep pipelined), counters dumped. Unlike CPU time this is exact and immune to the machine's
# noise, and it is all of a server's own work.
# run_instructions SCENARIO
run_instructions() {
  local scen=$1 name out req dump ir
  # The scenario's path, script and depth; 16 connections, whatever its own count.
  scenario "$scen"
  local path=$S_PATH script=$S_SCRIPT depth=$S_DEPTH
  local tsv=$OUT/instructions-$scen.tsv
  printf 'server\trequests\tinstructions\tinstructions_per_req\n' >"$tsv"
  for name in "${servers[@]}"; do
    note "instructions: $name under callgrind for ${INSTR_SECS}s ($scen)"
    dump=$OUT/callgrind-$scen-$name.out
    server_wrap=(valgrind --tool=callgrind "--callgrind-out-file=$dump")
    start_server "$name" "$OUT/server-$name-callgrind-$scen.log"
    server_wrap=()
    wrk_run 1 16 "$path" "$script" $depth >/dev/null 2>&1 || die "warm-up wrk failed"
    callgrind_control -z "$SERVER_PID" >/dev/null 2>&1
    out=$(wrk_run "$INSTR_SECS" 16 "$path" "$script" $depth 2>&1) || die "wrk under callgrind failed: $out"
    printf '%s\n' "$out" >"$OUT/wrk-$name-callgrind-$scen.txt"
    callgrind_control -d "$SERVER_PID" >/dev/null 2>&1
    stop_server
    req=$(wrk_field "$out" requests)
    [[ -n $req && $req -gt 0 ]] || die "no requests completed under callgrind: see $OUT/wrk-$name-callgrind-$scen.txt"
    # The dump after the zeroing is part 1; its "summary:" line is the instruction count.
    ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dump.1" | head -1)
    [[ -n $ir ]] || die "no callgrind summary in $dump.1"
    printf '%s\t%d\t%d\t%d\n' "$name" "$req" "$ir" $((ir / req)) >>"$tsv"
  done
  # demo/server compares with server-demo; "vs paired" compares demo-prev with server-demo and
  # prev-uring with demo-uring (this revision / the other one).
  awk -F'\t' 'NR == 1 { next }
    { n++; name[n] = $1; req[n] = $2; per[n] = $4; by[$1] = $4 }
    END {
      printf "%-12s %9s %16s %12s %12s\n", "server", "requests", "instructions/req", "demo/server", "vs paired"
      demo = by["server-demo"]
      for (i = 1; i <= n; i++) {
        r = (demo > 0 && per[i] > 0 && name[i] != "server-demo") ? sprintf("%.2fx", demo / per[i]) : ""
        mine = ""; if (name[i] == "demo-prev") mine = by["server-demo"]; if (name[i] == "prev-uring") mine = by["demo-uring"]
        p = (mine > 0 && per[i] > 0) ? sprintf("%.3fx", mine / per[i]) : ""
        printf "%-12s %9d %16d %12s %12s\n", name[i], req[i], per[i], r, p
      } }' "$tsv"
}

# --- main -----------------------------------------------------------------------------------

# A kernel or sandbox that refuses io_uring leaves demo-uring out, with the reason.
refusal=
for i in "${!servers[@]}"; do
  [[ ${servers[i]} == demo-uring || ${servers[i]} == prev-uring ]] || continue
  refusal=$(uring_refusal)
  break
done
if [[ -n $refusal ]]; then
  note "io_uring refused here, leaving demo-uring and prev-uring out: $refusal"
  kept=()
  for s in "${servers[@]}"; do
    [[ $s == demo-uring || $s == prev-uring ]] || kept+=("$s")
  done
  servers=("${kept[@]}")
fi
((${#servers[@]} > 0)) || die "no server left to measure"

summary=$OUT/summary.txt
{
  echo "load harness: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $WORKERS worker(s) on CPU $SERVER_CPU, wrk -t$wrk_threads and ab on CPU $CLIENT_CPU"
  echo "rounds $ROUNDS, ${DURATION}s per run after ${WARMUP}s warm-up; servers: ${servers[*]}; scenarios: $SCENARIOS"
  echo "open-file limit $(ulimit -Sn); raw results in $OUT"
  [[ -z $refusal ]] || echo "demo-uring left out: io_uring refused here: $refusal"
} | tee "$summary"

if want_part load; then
  echo
  echo "== load (per run)"
  run_load
  echo
  echo "== load: medians over $ROUNDS round(s); ratio rows: demo = server-demo (epoll, queue), uring = demo-uring, stack = demo-stack; newconn: per connection" | tee -a "$summary"
  print_load_table | tee -a "$summary"
fi
if want_part rss; then
  echo | tee -a "$summary"
  echo "== RSS per idle keep-alive connection ($IDLE_CONNS connections, one GET /plaintext each)" | tee -a "$summary"
  # Not piped: a pipeline would run it in a subshell, out of reach of the cleanup trap.
  run_rss >"$OUT/rss.txt"
  tee -a "$summary" <"$OUT/rss.txt"
fi
if want_part syscalls; then
  echo | tee -a "$summary"
  echo "== syscalls per request under strace -c -f, and under perf stat (GET /plaintext, 64 connections, no pipelining, ${STRACE_SECS}s)" | tee -a "$summary"
  run_syscalls >"$OUT/syscalls.txt"
  tee -a "$summary" <"$OUT/syscalls.txt"
fi
if want_part instructions; then
  echo | tee -a "$summary"
  for scen in "${instr_scenarios[@]}"; do
    echo "== user-space instructions per request under callgrind ($scen, 16 connections, ${INSTR_SECS}s)" | tee -a "$summary"
    run_instructions "$scen" >"$OUT/instructions-$scen.txt"
    tee -a "$summary" <"$OUT/instructions-$scen.txt"
  done
fi
echo
note "summary in $summary"
