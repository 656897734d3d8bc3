#!/usr/bin/env bash
# HTTPS against HTTP: CPU per keep-alive request and per TLS 1.3 handshake of server-demo
# (epoll and io_uring), hyper + tokio-rustls and nginx, paired in every round. Usage:
# `tls.sh --help`.
set -Eeuo pipefail

usage() {
  cat <<'EOF'
usage: benches/load/tls.sh [flags]

Builds server-demo and hyper_baseline (release), makes a self-signed ECDSA P-256 certificate
with openssl, and writes an OpenSSL configuration (OPENSSL_CONF) that makes the clients (wrk,
openssl s_time) offer TLS 1.3 with one cipher suite only, so that every server negotiates it.
Every server runs one worker pinned to one CPU; the clients are pinned to another. The CPU time
of a server is user + system from /proc/PID/stat (every thread, exited ones included), read
before and after each measured run.

Phases (--phases):
  load        for each round and scenario, every server over every scheme (the order reverses
              from round to round): start it, warm it up with wrk, measure a run of wrk, stop
              it. Prints medians over the rounds: requests/s and server CPU us per request;
              and the ratio in each round, median (min-max): https/http per server, and
              server-demo's https against its http, nginx's and hyper's https, with the
              targets of issue #29.
  handshakes  for each round, every server over https: `openssl s_time -new` (full
              handshakes) and `-reuse` (resumed, by ticket), one GET /plaintext over
              HTTP/1.0 per connection. Prints medians of server CPU us per connection, and
              the ratio to hyper's in each round, median (min-max).
  allocs      once per server and handshake kind: the same s_time run with the server under
              alloc-reports' preloaded malloc counter (alloc-reports/preload/alloc_counter.c,
              built here with cc): heap allocations per connection. Not timed.
  instructions  not in the default: for each scenario, every server over every scheme under
              callgrind (valgrind), which counts every instruction the process runs in user
              space: warmed up with wrk, counters zeroed, --instr-secs of wrk, counters dumped.
              Prints instructions per request over http and https and their difference: the
              user-space work TLS adds, exact and untouched by the machine's load (the load
              phase's time is what that work costs on this CPU, with the kernel's share).
  profile     not in the default: for each server and scheme, the first scenario under wrk
              with `perf stat` (syscalls and context switches per request) and `perf record
              -e cpu-clock --call-graph dwarf` on the server; prints the share of the
              server's samples by where they fall (crypto, copies, rustls, the kernel, ...)
              and writes each profile's top symbols to perf-*.txt. Needs perf; the CPU per
              request it prints includes perf's own cost.

  --phases L        from load,handshakes,allocs,instructions,profile (env PHASES, default
                    load,handshakes,allocs)
  --servers L       from server-demo-epoll,server-demo-uring,hyper,nginx (env SERVERS, default
                    all; nginx is left out with a note where it is not installed)
  --schemes L       from http,https (env SCHEMES, default both; the load, instructions and
                    profile phases)
  --scenarios L     from plaintext,json,pipelined (16 deep) (env SCENARIOS, default all; the
                    profile phase takes the first)
  --suite NAME      the one TLS 1.3 suite the clients offer (env SUITE, default
                    TLS_AES_256_GCM_SHA384)
  --rounds N        rounds of the load and handshake phases (env ROUNDS, default 3)
  --duration S      seconds per measured wrk run (env DURATION, default 5)
  --warmup S        seconds of load before each measured run (env WARMUP, default 1)
  --handshake-time S  seconds per s_time run (env HANDSHAKE_TIME, default 5)
  --instr-secs S    seconds of wrk per server and scheme under callgrind (env INSTR_SECS,
                    default 5)
  --connections N   wrk connections (env CONNECTIONS, default 16)
  --client-threads N  wrk's (and h2load's) threads (env CLIENT_THREADS, default 1): more, with
                    --client-cpu naming as many CPUs, where the machine has cores to spare for a
                    client that keeps the server busy over https too
  --rate N          load phase at a fixed rate instead of as fast as wrk goes: h2load --h1
                    with N requests/s per connection (--rps), the same rate over both schemes,
                    so that both give the server the same requests per wake-up as far as the
                    client can keep time (env RATE, default 0: wrk); plaintext and json only.
                    Server CPU is then its run time from /proc/PID/task/*/schedstat (the tick
                    counts of /proc/PID/stat are too coarse for a lightly loaded server),
                    split into user and system by their ticks. load.tsv's last column, in
                    either mode, is the server's context switches per request.
  --server-cpu L    CPUs of the server (env SERVER_CPU, default 0)
  --client-cpu L    CPUs of the client (env CLIENT_CPU, default 1)
  --port N          the servers' port (env PORT, default: a free one)
  --out DIR         raw results (env OUT, default $CARGO_TARGET_DIR/load-results/tls-<time>)
  --no-build        use the binaries already built (env BUILD=0)
  --summary-only    measure nothing: print the summaries again from the results in --out
                    (give the run's other flags, for the headers)
  -h, --help        this text
EOF
}

PROG=tls.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=common.sh
source "$HERE/common.sh"

PHASES=${PHASES:-load,handshakes,allocs}
SERVERS=${SERVERS:-server-demo-epoll,server-demo-uring,hyper,nginx}
SCHEMES=${SCHEMES:-http,https}
SCENARIOS=${SCENARIOS:-plaintext,json,pipelined}
SUITE=${SUITE:-TLS_AES_256_GCM_SHA384}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
HANDSHAKE_TIME=${HANDSHAKE_TIME:-5}
INSTR_SECS=${INSTR_SECS:-5}
CONNECTIONS=${CONNECTIONS:-16}
CLIENT_THREADS=${CLIENT_THREADS:-1}
RATE=${RATE:-0}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=${PORT:-}
BUILD=${BUILD:-1}
SUMMARY_ONLY=0
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$TARGET/load-results/tls-$(date +%Y%m%d-%H%M%S)}

while [[ $# -gt 0 ]]; do
  case $1 in
    --phases) need_value "$@"; PHASES=$2; shift 2 ;;
    --servers) need_value "$@"; SERVERS=$2; shift 2 ;;
    --schemes) need_value "$@"; SCHEMES=$2; shift 2 ;;
    --scenarios) need_value "$@"; SCENARIOS=$2; shift 2 ;;
    --suite) need_value "$@"; SUITE=$2; shift 2 ;;
    --rounds) need_value "$@"; ROUNDS=$2; shift 2 ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --warmup) need_value "$@"; WARMUP=$2; shift 2 ;;
    --handshake-time) need_value "$@"; HANDSHAKE_TIME=$2; shift 2 ;;
    --instr-secs) need_value "$@"; INSTR_SECS=$2; shift 2 ;;
    --connections) need_value "$@"; CONNECTIONS=$2; shift 2 ;;
    --client-threads) need_value "$@"; CLIENT_THREADS=$2; shift 2 ;;
    --rate) need_value "$@"; RATE=$2; shift 2 ;;
    --server-cpu) need_value "$@"; SERVER_CPU=$2; shift 2 ;;
    --client-cpu) need_value "$@"; CLIENT_CPU=$2; shift 2 ;;
    --port) need_value "$@"; PORT=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --summary-only) SUMMARY_ONLY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown flag $1 (see --help)" ;;
  esac
done

has() { [[ ",$1," == *",$2,"* ]]; }
for p in ${PHASES//,/ }; do
  has load,handshakes,allocs,instructions,profile "$p" || die "unknown phase $p"
done
servers=()
for s in ${SERVERS//,/ }; do
  case $s in
    server-demo-epoll|server-demo-uring|hyper) servers+=("$s") ;;
    nginx)
      if command -v nginx >/dev/null; then servers+=(nginx); else note "nginx not installed: left out"; fi ;;
    *) die "unknown server $s" ;;
  esac
done
[[ ${#servers[@]} -gt 0 ]] || die "no server to run"
for s in ${SCHEMES//,/ }; do [[ $s == http || $s == https ]] || die "unknown scheme $s"; done
for s in ${SCENARIOS//,/ }; do has plaintext,json,pipelined "$s" || die "unknown scenario $s"; done
if [[ $SUMMARY_ONLY == 1 ]]; then
  [[ -d $OUT ]] || die "--summary-only: no results in $OUT (give --out DIR)"
  BUILD=0
fi
command -v wrk >/dev/null || die "wrk is needed (apt-get install wrk)"
[[ $RATE =~ ^[0-9]+$ ]] || die "--rate takes requests per second per connection"
[[ $CLIENT_THREADS =~ ^[1-9][0-9]*$ ]] || die "--client-threads takes a number of threads"
if [[ $RATE != 0 ]] && has "$PHASES" load; then
  command -v h2load >/dev/null || die "--rate needs h2load (apt-get install nghttp2-client)"
  has "$SCENARIOS" pipelined && die "--rate: the pipelined scenario is wrk's; give --scenarios plaintext,json"
fi
command -v openssl >/dev/null || die "openssl is needed (the certificate, s_time)"
if has "$PHASES" instructions && [[ $SUMMARY_ONLY == 0 ]]; then
  command -v callgrind_control >/dev/null || die "the instructions phase needs valgrind (apt-get install valgrind)"
fi

if [[ $BUILD == 1 ]]; then
  (cd "$ROOT" && cargo build --release -q -p server-demo -p bufslab-benches --bin server-demo --bin hyper_baseline)
fi
DEMO=$TARGET/release/server-demo
HYPER=$TARGET/release/hyper_baseline
for b in "$DEMO" "$HYPER"; do [[ -x $b ]] || die "no $b (build it, or drop --no-build)"; done

CPU_MODEL=$(lscpu | sed -n 's/^Model name: *//p')
CPU_MODEL="$CPU_MODEL (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p'))"
LOAD=$OUT/load.tsv
HANDSHAKES=$OUT/handshakes.tsv
ALLOCS=$OUT/allocs.tsv
PROFILES=$OUT/profiles.tsv
INSTRS=$OUT/instructions.tsv

# The certificate, the clients' configuration and the port: not for --summary-only, which
# reads the results of an earlier run.
setup() {
  mkdir -p "$OUT"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -keyout "$OUT/key.pem" -out "$OUT/cert.pem" 2>/dev/null
  # The clients' OpenSSL (wrk links the system's libssl, as openssl does) reads this at start:
  # TLS 1.3 with one suite. The servers keep their defaults; a TLS 1.3 server can only pick a
  # suite the client offers.
  cat >"$OUT/openssl-client.cnf" <<EOF
openssl_conf = openssl_init
[openssl_init]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
MinProtocol = TLSv1.3
Ciphersuites = $SUITE
EOF
  export OPENSSL_CONF=$OUT/openssl-client.cnf

  if [[ -z $PORT ]]; then
    # A free port, so that two runs on one machine do not meet.
    for _ in $(seq 50); do
      PORT=$((20000 + RANDOM % 40000))
      ss -Hltn "sport = :$PORT" | grep -q . || break
    done
  fi
  note "CPU: $CPU_MODEL; port $PORT; results in $OUT"
}
CLK_TCK=$(getconf CLK_TCK)

# utime + stime, fields 14 and 15 of /proc/PID/stat, counted after the `(comm)` field, which
# may hold spaces.

cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# The same, user and system apart: "utime stime".
cpu_split() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12, $13}'; }
# Run time in ns of every live thread (schedstat's first field), and context switches.
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { print s }'; }
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ { s += $2 } END { print s }'; }

# nginx's configuration for one scheme: one process (no master), the same certificate, TLS 1.3,
# the two routes, no access log, keep-alive without a request limit.
nginx_conf() { # scheme dir
  local scheme=$1 dir=$2 listen="listen 127.0.0.1:$PORT"
  [[ $scheme == https ]] && listen="$listen ssl"
  mkdir -p "$dir/tmp"
  cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  log_format suite '\$ssl_protocol \$ssl_cipher \$ssl_session_reused';
  keepalive_requests 1000000000;
  keepalive_timeout 300s;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  ssl_certificate $OUT/cert.pem;
  ssl_certificate_key $OUT/key.pem;
  ssl_protocols TLSv1.3;
  server {
    $listen;
    location = /plaintext { default_type text/plain; return 200 "Hello, World!"; }
    location = /json { default_type application/json; return 200 '{"message":"Hello, World!"}'; }
    location = /suite { access_log $dir/suite.log suite; return 200 "Hello, World!"; }
  }
}
EOF
}

SPID=
# A command the server runs under (the instructions phase: callgrind), and how many times to
# ask whether it answers, 0.05 s apart (more under valgrind, which starts slowly).
WRAP=()
START_TRIES=100
# Starts `server` over `scheme` pinned to SERVER_CPU (with `env` before it, e.g. LD_PRELOAD)
# and waits until it answers; sets SPID.
start_server() { # server scheme tag [env...]
  local server=$1 scheme=$2 tag=$3 tls=() cmd
  shift 3
  [[ $scheme == https ]] && tls=(--tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem")
  case $server in
    server-demo-*) cmd=("$DEMO" --addr "127.0.0.1:$PORT" --workers 1 --io "${server#server-demo-}" "${tls[@]}") ;;
    hyper) cmd=("$HYPER" --addr "127.0.0.1:$PORT" --workers 1 "${tls[@]}") ;;
    nginx)
      nginx_conf "$scheme" "$OUT/nginx-$scheme"
      cmd=(nginx -p "$OUT/nginx-$scheme" -c "$OUT/nginx-$scheme/nginx.conf" -e stderr) ;;
  esac
  local log=$OUT/server-$tag.log
  env "$@" taskset -c "$SERVER_CPU" "${WRAP[@]}" "${cmd[@]}" >"$log" 2>&1 &
  SPID=$!
  for _ in $(seq "$START_TRIES"); do
    curl -sk -o /dev/null "$scheme://127.0.0.1:$PORT/plaintext" && return 0
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.05
  done
  kill "$SPID" 2>/dev/null || true
  die "$server ($scheme) did not start: $(cat "$log")"
}

stop_server() {
  # TERM, not INT: a background job of a script starts with SIGINT ignored, and only
  # server-demo installs its own handler. KILL after 10 s: under valgrind the io_uring
  # server was seen not to end on TERM (its worker waits in io_uring_enter); the instructions
  # phase dumped its counts before this.
  kill -TERM "$SPID" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$SPID" 2>/dev/null || true
  wait "$SPID" 2>/dev/null || true
  SPID=
}
trap '[[ -n $SPID ]] && kill "$SPID" 2>/dev/null; true' EXIT

# The suite the clients get, asked of nginx (which logs it) with wrk itself.
check_suite() {
  has "$SERVERS" nginx && command -v nginx >/dev/null || return 0
  start_server nginx https suite-check
  taskset -c "$CLIENT_CPU" wrk -t1 -c2 -d1s "https://127.0.0.1:$PORT/suite" >/dev/null
  stop_server
  local got
  got=$(sort -u "$OUT/nginx-https/suite.log" | tr '\n' ' ')
  [[ $got == "TLSv1.3 $SUITE . " ]] || die "wrk negotiated '$got', not TLSv1.3 $SUITE"
  note "wrk negotiates TLSv1.3 $SUITE (nginx's log)"
}

# What the client asks for in `scenario` over `scheme`: sets URL, and WRK_ARGS (the 16-deep
# pipeline's script for `pipelined`).
URL=
WRK_ARGS=()
target() { # scenario scheme
  local path=/plaintext
  WRK_ARGS=()
  [[ $1 == json ]] && path=/json
  [[ $1 == pipelined ]] && WRK_ARGS=(-s "$HERE/pipeline.lua" -- 16)
  URL=$2://127.0.0.1:$PORT$path
}

# wrk on the client's CPUs against `target`'s URL for `secs` seconds.
wrk_for() { # secs
  taskset -c "$CLIENT_CPU" wrk -t"$CLIENT_THREADS" -c"$CONNECTIONS" -d"${1}s" "$URL" "${WRK_ARGS[@]}"
}

# ---------------------------------------------------------------------------------------------
# load
run_load() { # round scenario server scheme
  local round=$1 scenario=$2 server=$3 scheme=$4 tag
  tag=$round-$scenario-$server-$scheme
  start_server "$server" "$scheme" "$tag"
  target "$scenario" "$scheme"
  # One client run of `secs` seconds: wrk as fast as it goes, or h2load at --rate.
  client() {
    if [[ $RATE == 0 ]]; then
      wrk_for "$1"
    else
      taskset -c "$CLIENT_CPU" h2load --h1 -c"$CONNECTIONS" -t"$CLIENT_THREADS" --rps="$RATE" -D "$1" "$URL"
    fi
  }
  if [[ $WARMUP != 0 ]]; then client "$WARMUP" >/dev/null; fi
  local before after ns0 ns1 sw0 sw1 out reqs secs
  before=$(cpu_split "$SPID") ns0=$(cpu_ns "$SPID") sw0=$(switches "$SPID")
  out=$(client "$DURATION")
  after=$(cpu_split "$SPID") ns1=$(cpu_ns "$SPID") sw1=$(switches "$SPID")
  stop_server
  echo "$out" >"$OUT/client-$tag.txt"
  if [[ $RATE == 0 ]]; then
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
      note "warning: $tag: $(echo "$out" | grep "Non-2xx\|Socket errors")"
    fi
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    secs=$(echo "$out" | awk '/requests in/ {sub(/s,$/, "", $4); print $4}')
    ns0=0 ns1=0
  else
    # "requests: N total, N started, N done, N succeeded, N failed, N errored, N timeout"
    echo "$out" | awk '/^requests:/ && ($10 + $12 + $14) > 0 { exit 1 }' \
      || note "warning: $tag: $(echo "$out" | grep '^requests:')"
    reqs=$(echo "$out" | awk '/^requests:/ {print $8}')
    secs=$DURATION
  fi
  # Per request: user and system from the ticks, or with --rate schedstat's run time split
  # by the ticks' proportion; then context switches.
  awk -v r="$round" -v s="$scenario" -v d="$server" -v m="$scheme" -v n="$reqs" -v secs="$secs" \
    -v b="$before" -v a="$after" -v hz="$CLK_TCK" -v ns="$((ns1 - ns0))" -v sw="$((sw1 - sw0))" \
    'BEGIN { split(b, x, " "); split(a, y, " "); u = (y[1] - x[1]) / hz * 1e6 / n; k = (y[2] - x[2]) / hz * 1e6 / n
      if (ns > 0) { t = ns / 1e3 / n; f = (u + k > 0) ? u / (u + k) : 0; u = t * f; k = t - u }
      printf "%s\t%s\t%s\t%s\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\n", r, s, d, m, n / secs, u + k, u, k, sw / n }' \
    >>"$LOAD"
}

load_phase() {
  echo -e "round\tscenario\tserver\tscheme\treq_per_s\tcpu_us_per_req\tuser_us_per_req\tsys_us_per_req\tswitches_per_req" >"$LOAD"
  local pairs=() round scenario i
  for s in "${servers[@]}"; do
    for m in ${SCHEMES//,/ }; do pairs+=("$s $m"); done
  done
  for round in $(seq "$ROUNDS"); do
    for scenario in ${SCENARIOS//,/ }; do
      # Odd rounds in order, even rounds reversed: each server's http and https runs are
      # neighbours, and each comes first as often as second.
      for ((i = 0; i < ${#pairs[@]}; i++)); do
        local k=$i
        ((round % 2 == 0)) && k=$((${#pairs[@]} - 1 - i))
        # shellcheck disable=SC2086 # "server scheme"
        run_load "$round" "$scenario" ${pairs[$k]}
      done
      note "load: round $round/$ROUNDS, $scenario done"
    done
  done
  load_summary
}

load_summary() {
  local rounds
  rounds=$(awk -F'\t' 'NR > 1 && $1 > m { m = $1 } END { print m + 0 }' "$LOAD")
  {
    if [[ $RATE == 0 ]]; then
      echo "load: medians over $rounds round(s); wrk -t$CLIENT_THREADS -c$CONNECTIONS -d${DURATION}s (after ${WARMUP}s of warm-up), pipelined: -s pipeline.lua -- 16"
    else
      echo "load: medians over $rounds round(s); h2load --h1 -c$CONNECTIONS -t$CLIENT_THREADS --rps=$RATE -D $DURATION (after ${WARMUP}s of warm-up): $((RATE * CONNECTIONS)) requests/s offered; CPU from schedstat"
    fi
    echo "server on CPU $SERVER_CPU, the client on CPU $CLIENT_CPU; TLS: TLSv1.3 $SUITE; CPU: $CPU_MODEL"
    echo "https/http: the ratio in each round (the two runs are neighbours), median (min-max)"
    printf "%-10s %-18s %11s %11s %11s %11s  %s\n" scenario server "http req/s" "https req/s" "http us/req" "https us/req" "https/http"
    awk -F'\t' "$AWK_MEDIAN"'
      NR > 1 { k = $2 "\t" $3; v[k, $4] = v[k, $4] " " $6; q[k, $4] = q[k, $4] " " $5; keys[k] = 1
               c[$1, k, $4] = $6; if ($1 > rounds) rounds = $1 }
      function paired(k,   r, list, lo, hi, x) {
        list = ""; lo = ""; hi = ""
        for (r = 1; r <= rounds; r++) {
          if (c[r, k, "https"] == "" || c[r, k, "http"] + 0 == 0) continue
          x = c[r, k, "https"] / c[r, k, "http"]
          list = list " " x
          if (lo == "" || x < lo) lo = x
          if (hi == "" || x > hi) hi = x
        }
        return list == "" ? "-" : sprintf("%.3f (%.2f-%.2f)", median(list), lo, hi)
      }
      END {
        for (k in keys) {
          split(k, p, "\t")
          printf "%-10s %-18s %11.0f %11.0f %11.3f %11.3f  %s\n", p[1], p[2], median(q[k, "http"]),
            median(q[k, "https"]), median(v[k, "http"]), median(v[k, "https"]), paired(k)
        }
      }' "$LOAD" | sort
    echo
    echo "server-demo's https against its http and the peers' https: CPU per request, the ratio in each round (paired runs), median (min-max) over the rounds"
    echo "issue #29's targets: plaintext and json https/http <= 1.08, / nginx <= 0.80, / hyper <= 0.92; pipelined / hyper <= 0.70 (+ held, ! missed, by the median)"
    printf "%-10s %-18s %-22s %-22s %-22s\n" scenario server "https/http" "/ nginx https" "/ hyper https"
    awk -F'\t' "$AWK_MEDIAN"'
      NR > 1 { v[$1, $2, $3, $4] = $6; sc[$2] = 1; sv[$3] = 1; if ($1 > rounds) rounds = $1 }
      # The ratio a/b in every round where both ran: "median (min-max)" and the mark.
      function paired(s, a, am, b, bm, target,   r, list, lo, hi, x, m) {
        list = ""; lo = ""; hi = ""
        for (r = 1; r <= rounds; r++) {
          if (v[r, s, a, am] == "" || v[r, s, b, bm] == "" || v[r, s, b, bm] == 0) continue
          x = v[r, s, a, am] / v[r, s, b, bm]
          list = list " " x
          if (lo == "" || x < lo) lo = x
          if (hi == "" || x > hi) hi = x
        }
        if (list == "") return "-"
        m = median(list)
        return sprintf("%.3f (%.2f-%.2f)%s", m, lo, hi, target == 0 ? "" : (m <= target ? " +" : " !"))
      }
      END {
        for (s in sc) for (d in sv) {
          if (d !~ /^server-demo/) continue
          pipe = s == "pipelined"
          printf "%-10s %-18s %-22s %-22s %-22s\n", s, d, paired(s, d, "https", d, "http", pipe ? 0 : 1.08),
            paired(s, d, "https", "nginx", "https", pipe ? 0 : 0.80),
            paired(s, d, "https", "hyper", "https", pipe ? 0.70 : 0.92)
        }
      }' "$LOAD" | sort
  } | tee "$OUT/load-summary.txt"
}

# ---------------------------------------------------------------------------------------------
# instructions
run_instructions() { # scenario server scheme
  local scenario=$1 server=$2 scheme=$3 tag dump out reqs ir
  tag=instr-$scenario-$server-$scheme
  dump=$OUT/callgrind-$tag.out
  WRAP=(valgrind --tool=callgrind "--callgrind-out-file=$dump") START_TRIES=1200
  start_server "$server" "$scheme" "$tag"
  WRAP=() START_TRIES=100
  target "$scenario" "$scheme"
  wrk_for "$WARMUP" >/dev/null
  callgrind_control -z "$SPID" >/dev/null 2>&1
  out=$(wrk_for "$INSTR_SECS")
  callgrind_control -d "$SPID" >/dev/null 2>&1
  stop_server
  echo "$out" >"$OUT/wrk-$tag.txt"
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  [[ -n $reqs && $reqs -gt 0 ]] || die "$tag: no request completed under callgrind (see $OUT/wrk-$tag.txt)"
  # The dump after the zeroing is part 1; its "summary:" line is the instruction count.
  ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dump.1" | head -1)
  [[ -n $ir ]] || die "$tag: no callgrind summary in $dump.1"
  printf '%s\t%s\t%s\t%d\t%d\t%d\n' "$scenario" "$server" "$scheme" "$reqs" "$ir" \
    "$(handshake_instructions "$dump.1" "$server" "$scheme")" >>"$INSTRS"
}

# The instructions of the run's handshakes (wrk opens its connections inside the measured
# run): the inclusive count of the function that drives a server's handshake, from the dump.
handshake_instructions() { # dump server scheme
  local fn
  [[ $3 == https ]] || { echo 0; return; }
  case $2 in
    server-demo-*) fn=':bufslab_tls::handshake::Handshake::advance \[' ;;
    hyper) fn='MidHandshake<IS> as core::future::future::Future>::poll \[' ;;
    nginx) fn=':ngx_ssl_handshake \[' ;;
  esac
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | grep -m1 -E "$fn" \
    | awk '{ gsub(/,/, "", $1); print $1 + 0; found = 1 } END { if (!found) print 0 }'
}

instructions_phase() {
  echo -e "scenario\tserver\tscheme\trequests\tinstructions\thandshake_instructions" >"$INSTRS"
  local scenario server scheme
  for scenario in ${SCENARIOS//,/ }; do
    for server in "${servers[@]}"; do
      for scheme in ${SCHEMES//,/ }; do run_instructions "$scenario" "$server" "$scheme"; done
    done
    note "instructions: $scenario done"
  done
  instructions_summary
}

instructions_summary() {
  {
    echo "instructions: user-space instructions per request under callgrind, wrk -t$CLIENT_THREADS -c$CONNECTIONS -d${INSTR_SECS}s after ${WARMUP}s of warm-up (pipelined: 16 deep); TLS: TLSv1.3 $SUITE; CPU: $CPU_MODEL"
    echo "https: all of the run's instructions; its $CONNECTIONS handshakes (the server's handshake function, inclusive) apart in \"of which handshakes\"; the last two columns leave them out"
    printf "%-10s %-18s %8s %8s %18s %14s %11s\n" scenario server "http" "https" "of which handshakes" "https - http" "https/http"
    awk -F'\t' 'NR > 1 { k = $1 "\t" $2; per[k, $3] = $5 / $4; hs[k, $3] = $6 / $4; keys[k] = 1 }
      END {
        for (k in keys) {
          split(k, p, "\t"); h = per[k, "http"]; s = per[k, "https"]; x = s - hs[k, "https"]
          printf "%-10s %-18s %8s %8s %18s %14s %11s\n", p[1], p[2], h == "" ? "-" : sprintf("%.0f", h),
            s == "" ? "-" : sprintf("%.0f", s), s == "" ? "-" : sprintf("%.0f", hs[k, "https"]),
            (h == "" || s == "") ? "-" : sprintf("%+.0f", x - h),
            (h == "" || s == "" || h == 0) ? "-" : sprintf("%.3f", x / h)
        }
      }' "$INSTRS" | sort
  } | tee "$OUT/instructions-summary.txt"
}

# ---------------------------------------------------------------------------------------------
# handshakes
s_time() { # mode(new|reuse) -> the s_time output
  taskset -c "$CLIENT_CPU" openssl s_time -connect "127.0.0.1:$PORT" -www /plaintext \
    "-$1" -time "$HANDSHAKE_TIME" 2>&1
}

# Connections of an s_time run, and a check that a -reuse run resumed (s_time prints `r` for
# each resumed connection, `*` for each full one).
s_time_count() { # mode output tag
  local n full resumed
  n=$(echo "$2" | awk '/connections in .* real seconds/ {print $1}')
  [[ -n $n && $n -gt 0 ]] || die "$3: s_time made no connection: $(echo "$2" | tail -3)"
  resumed=$( (echo "$2" | grep -E '^[r*]+$' || true) | tr -cd r | wc -c)
  full=$( (echo "$2" | grep -E '^[r*]+$' || true) | tr -cd '*' | wc -c)
  if [[ $1 == reuse && $resumed -lt $((n * 99 / 100)) ]]; then
    die "$3: only $resumed of $n connections resumed"
  fi
  if [[ $1 == new && $full -lt $n ]]; then
    die "$3: $full full handshakes for $n connections"
  fi
  echo "$n"
}

run_handshake() { # round server mode
  local round=$1 server=$2 mode=$3 tag out n before after
  tag=$round-handshake-$mode-$server
  start_server "$server" https "$tag"
  before=$(cpu_ticks "$SPID")
  out=$(s_time "$mode")
  after=$(cpu_ticks "$SPID")
  stop_server
  echo "$out" >"$OUT/s_time-$tag.txt"
  n=$(s_time_count "$mode" "$out" "$tag")
  awk -v r="$round" -v d="$server" -v m="$mode" -v n="$n" -v secs="$HANDSHAKE_TIME" \
    -v t=$((after - before)) -v hz="$CLK_TCK" \
    'BEGIN { printf "%s\t%s\t%s\t%.0f\t%.3f\n", r, d, m, n / secs, t / hz * 1e6 / n }' >>"$HANDSHAKES"
}

handshake_phase() {
  echo -e "round\tserver\tmode\tconn_per_s\tcpu_us_per_conn" >"$HANDSHAKES"
  local round i k mode
  for round in $(seq "$ROUNDS"); do
    for mode in new reuse; do
      for ((i = 0; i < ${#servers[@]}; i++)); do
        k=$i
        ((round % 2 == 0)) && k=$((${#servers[@]} - 1 - i))
        run_handshake "$round" "${servers[$k]}" "$mode"
      done
    done
    note "handshakes: round $round/$ROUNDS done"
  done
  handshake_summary
}

handshake_summary() {
  local rounds
  rounds=$(awk -F'\t' 'NR > 1 && $1 > m { m = $1 } END { print m + 0 }' "$HANDSHAKES")
  {
    echo "handshakes: medians over $rounds round(s); openssl s_time -www /plaintext -new|-reuse -time $HANDSHAKE_TIME (one client, one connection at a time, one HTTP/1.0 request each)"
    echo "server on CPU $SERVER_CPU, s_time on CPU $CLIENT_CPU; TLS: TLSv1.3 $SUITE, X25519, ECDSA P-256; CPU: $CPU_MODEL"
    printf "%-18s %-7s %10s %14s %22s\n" server kind "conn/s" "us/connection" "/ hyper (paired)"
    awk -F'\t' "$AWK_MEDIAN"'
      NR > 1 { v[$2, $3] = v[$2, $3] " " $5; q[$2, $3] = q[$2, $3] " " $4; sv[$2] = 1; c[$1, $2, $3] = $5
               if ($1 > rounds) rounds = $1 }
      # The ratio to hyper in every round: "median (min-max)".
      function paired(d, mode,   r, list, lo, hi, x) {
        list = ""; lo = ""; hi = ""
        for (r = 1; r <= rounds; r++) {
          if (c[r, d, mode] == "" || c[r, "hyper", mode] + 0 == 0) continue
          x = c[r, d, mode] / c[r, "hyper", mode]
          list = list " " x
          if (lo == "" || x < lo) lo = x
          if (hi == "" || x > hi) hi = x
        }
        return list == "" ? "-" : sprintf("%.3f (%.2f-%.2f)", median(list), lo, hi)
      }
      END {
        for (d in sv) for (m = 0; m < 2; m++) {
          mode = m ? "reuse" : "new"
          printf "%-18s %-7s %10.0f %14.1f %22s\n", d, m ? "resumed" : "full",
            median(q[d, mode]), median(v[d, mode]), paired(d, mode)
        }
      }' "$HANDSHAKES" | sort
  } | tee "$OUT/handshakes-summary.txt"
}

# ---------------------------------------------------------------------------------------------
# allocs
allocs_phase() {
  command -v cc >/dev/null || { note "allocs: no cc to build the counter: left out"; return 0; }
  local so=$OUT/alloc_counter.so counts server mode out n a b
  cc -shared -fPIC -O2 -o "$so" "$ROOT/alloc-reports/preload/alloc_counter.c"
  echo -e "server\tmode\tconnections\tallocs_per_conn" >"$ALLOCS"
  # The file's second little-endian u64: successful allocations so far.
  blocks() { od -An -t u8 -j 8 -N 8 "$1" | tr -d ' '; }
  for server in "${servers[@]}"; do
    for mode in new reuse; do
      counts=$OUT/alloc-counts-$server-$mode
      head -c 48 /dev/zero >"$counts"
      start_server "$server" https "allocs-$mode-$server" LD_PRELOAD="$so" ALLOC_COUNTER_FILE="$counts"
      a=$(blocks "$counts")
      out=$(s_time "$mode")
      b=$(blocks "$counts")
      stop_server
      n=$(s_time_count "$mode" "$out" "allocs-$mode-$server")
      awk -v d="$server" -v m="$mode" -v n="$n" -v a="$a" -v b="$b" \
        'BEGIN { printf "%s\t%s\t%d\t%.1f\n", d, m, n, (b - a) / n }' >>"$ALLOCS"
    done
  done
  allocs_summary
}

allocs_summary() {
  {
    echo "allocations per connection (full or resumed handshake, one HTTP/1.0 request, close): alloc-reports/preload/alloc_counter.c in LD_PRELOAD, the s_time runs above"
    printf "%-18s %-7s %12s %14s\n" server kind connections "allocs/conn"
    awk -F'\t' 'NR > 1 { printf "%-18s %-7s %12d %14.1f\n", $1, $2 == "new" ? "full" : "resumed", $3, $4 }' "$ALLOCS"
  } | tee "$OUT/allocs-summary.txt"
}

# ---------------------------------------------------------------------------------------------
# profile
# Where a profile's samples fall, from `perf report --no-children --sort dso,sym` lines
# ("percent dso [.|k] symbol"): a share per group, the groups in the order matched.
PROFILE_GROUPS='
  function group(dso, sym) {
    if (sym ~ /aes|gcm|gfmul|ghash|GFp_|ring_core|x25519|p256|ecp_nistz|sha256|sha512|chacha|poly1305|bn_mul|ecdsa|EVP_|ossl_|OPENSSL_/) return "crypto"
    if (sym ~ /memcpy|memmove|memset/) return "memcpy/memset"
    if (sym ~ /rustls|bufslab_tls|SSL_|ssl3_|tls1_|tls13_/) return "TLS state (rustls / OpenSSL)"
    if (dso ~ /kernel/ && sym ~ /finish_task_switch|_raw_spin_unlock_irqrestore|__schedule|try_to_wake_up|schedule_hrtimeout/) return "kernel: sleep and wake-up"
    if (dso ~ /kernel/) return "kernel: the rest (TCP, syscalls)"
    if (sym ~ /malloc|free|cfree|_int_|realloc/) return "malloc"
    return "server (rest)"
  }'

run_profile() { # server scheme scenario
  local server=$1 scheme=$2 scenario=$3 tag
  tag=profile-$scenario-$server-$scheme
  start_server "$server" "$scheme" "$tag"
  target "$scenario" "$scheme"
  wrk_for "$WARMUP" >/dev/null
  local before after out reqs
  before=$(cpu_ticks "$SPID")
  perf stat -e raw_syscalls:sys_enter,context-switches -x, -o "$OUT/$tag.stat" -p "$SPID" \
    -- sleep "$DURATION" &
  local stat=$!
  perf record -q -e cpu-clock -F 4999 --call-graph dwarf,8192 -o "$OUT/$tag.data" -p "$SPID" \
    -- sleep "$DURATION" 2>/dev/null &
  local rec=$!
  out=$(wrk_for "$DURATION")
  wait "$stat" "$rec" || true
  after=$(cpu_ticks "$SPID")
  stop_server
  echo "$out" >"$OUT/wrk-$tag.txt"
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  perf report -i "$OUT/$tag.data" --no-children --sort dso,sym --stdio 2>/dev/null \
    | grep -v '^#' | grep '%' | grep -v '^ *|' | grep -v -- '---' >"$OUT/perf-$tag.txt" || true
  # perf stat's CSV: value,unit,event,...
  awk -F, -v n="$reqs" -v t=$((after - before)) -v hz="$CLK_TCK" -v d="$server" -v m="$scheme" \
    -v s="$scenario" '
    $3 ~ /sys_enter/ { sc = $1 } $3 ~ /context-switches/ { cs = $1 }
    END { printf "%s\t%s\t%s\t%d\t%.3f\t%.2f\t%.2f\n", s, d, m, n, t / hz * 1e6 / n, sc / n, cs / n }' \
    "$OUT/$tag.stat" >>"$PROFILES"
}

profile_phase() {
  command -v perf >/dev/null || { note "profile: no perf: left out"; return 0; }
  echo -e "scenario\tserver\tscheme\trequests\tcpu_us_per_req\tsyscalls_per_req\tcswitch_per_req" >"$PROFILES"
  local scenario=${SCENARIOS%%,*} server scheme tag
  for server in "${servers[@]}"; do
    for scheme in ${SCHEMES//,/ }; do run_profile "$server" "$scheme" "$scenario"; done
  done
  profile_summary "$scenario"
}

profile_summary() { # scenario
  local scenario=$1 server scheme tag
  {
    echo "profile: $scenario, wrk -t$CLIENT_THREADS -c$CONNECTIONS -d${DURATION}s, perf stat and perf record -e cpu-clock -F 4999 --call-graph dwarf on the server (CPU per request includes perf's cost); CPU: $CPU_MODEL"
    printf "%-18s %-6s %12s %14s %14s\n" server scheme "us/req" "syscalls/req" "cswitch/req"
    awk -F'\t' 'NR > 1 { printf "%-18s %-6s %12.3f %14.2f %14.2f\n", $2, $3, $5, $6, $7 }' "$PROFILES"
    for server in "${servers[@]}"; do
      for scheme in ${SCHEMES//,/ }; do
        tag=profile-$scenario-$server-$scheme
        echo "$server $scheme: share of the server's cpu-clock samples (symbols: perf-$tag.txt)"
        awk "$PROFILE_GROUPS"'
          { pct = $1; sub(/%/, "", pct); dso = $2; sym = $0; sub(/^ *[0-9.]+% +[^ ]+ +\[.\] +/, "", sym)
            g[group(dso, sym)] += pct }
          END { for (k in g) printf "%s\t%.1f\n", k, g[k] }' "$OUT/perf-$tag.txt" \
          | sort -t$'\t' -k2 -nr | awk -F'\t' '$2 >= 0.05 { printf "  %-34s %5.1f %%\n", $1, $2 }' \
          | tee "$OUT/groups-$tag.txt"
      done
    done
  } | tee "$OUT/profile-summary.txt"
}

if [[ $SUMMARY_ONLY == 1 ]]; then
  LOAD=$OUT/load.tsv HANDSHAKES=$OUT/handshakes.tsv ALLOCS=$OUT/allocs.tsv PROFILES=$OUT/profiles.tsv
  INSTRS=$OUT/instructions.tsv
  if has "$PHASES" load && [[ -f $LOAD ]]; then load_summary; fi
  if has "$PHASES" handshakes && [[ -f $HANDSHAKES ]]; then handshake_summary; fi
  if has "$PHASES" allocs && [[ -f $ALLOCS ]]; then allocs_summary; fi
  if has "$PHASES" instructions && [[ -f $INSTRS ]]; then instructions_summary; fi
  if has "$PHASES" profile && [[ -f $PROFILES ]]; then profile_summary "${SCENARIOS%%,*}"; fi
  exit 0
fi
setup
if has "$PHASES" load && has "$SCHEMES" https; then check_suite; fi
if has "$PHASES" load; then load_phase; fi
if has "$PHASES" handshakes; then handshake_phase; fi
if has "$PHASES" allocs; then allocs_phase; fi
if has "$PHASES" instructions; then instructions_phase; fi
if has "$PHASES" profile; then profile_phase; fi
