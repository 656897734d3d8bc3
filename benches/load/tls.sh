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
              it. Prints medians over the rounds: requests/s and server CPU us per request,
              the ratio https/http per server, and server-demo's https against nginx's and
              hyper's https, with the targets of issue #29.
  handshakes  for each round, every server over https: `openssl s_time -new` (full
              handshakes) and `-reuse` (resumed, by ticket), one GET /plaintext over
              HTTP/1.0 per connection. Prints medians of server CPU us per connection, and
              the ratio to hyper's.
  allocs      once per server and handshake kind: the same s_time run with the server under
              alloc-reports' preloaded malloc counter (alloc-reports/preload/alloc_counter.c,
              built here with cc): heap allocations per connection. Not timed.

  --phases L        from load,handshakes,allocs (env PHASES, default all)
  --servers L       from server-demo-epoll,server-demo-uring,hyper,nginx (env SERVERS, default
                    all; nginx is left out with a note where it is not installed)
  --schemes L       from http,https (env SCHEMES, default both; load phase only)
  --scenarios L     from plaintext,json,pipelined (16 deep) (env SCENARIOS, default all)
  --suite NAME      the one TLS 1.3 suite the clients offer (env SUITE, default
                    TLS_AES_256_GCM_SHA384)
  --rounds N        rounds (env ROUNDS, default 3)
  --duration S      seconds per measured wrk run (env DURATION, default 5)
  --warmup S        seconds of load before each measured run (env WARMUP, default 1)
  --handshake-time S  seconds per s_time run (env HANDSHAKE_TIME, default 5)
  --connections N   wrk connections (env CONNECTIONS, default 16)
  --server-cpu L    CPUs of the server (env SERVER_CPU, default 0)
  --client-cpu L    CPUs of the client (env CLIENT_CPU, default 1)
  --port N          the servers' port (env PORT, default: a free one)
  --out DIR         raw results (env OUT, default $CARGO_TARGET_DIR/load-results/tls-<time>)
  --no-build        use the binaries already built (env BUILD=0)
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
CONNECTIONS=${CONNECTIONS:-16}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=${PORT:-}
BUILD=${BUILD:-1}
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
    --connections) need_value "$@"; CONNECTIONS=$2; shift 2 ;;
    --server-cpu) need_value "$@"; SERVER_CPU=$2; shift 2 ;;
    --client-cpu) need_value "$@"; CLIENT_CPU=$2; shift 2 ;;
    --port) need_value "$@"; PORT=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown flag $1 (see --help)" ;;
  esac
done

has() { [[ ",$1," == *",$2,"* ]]; }
for p in ${PHASES//,/ }; do
  has load,handshakes,allocs "$p" || die "unknown phase $p"
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
command -v wrk >/dev/null || die "wrk is needed (apt-get install wrk)"
command -v openssl >/dev/null || die "openssl is needed (the certificate, s_time)"

if [[ $BUILD == 1 ]]; then
  (cd "$ROOT" && cargo build --release -q -p server-demo -p bufslab-benches --bin server-demo --bin hyper_baseline)
fi
DEMO=$TARGET/release/server-demo
HYPER=$TARGET/release/hyper_baseline
for b in "$DEMO" "$HYPER"; do [[ -x $b ]] || die "no $b (build it, or drop --no-build)"; done

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
CLK_TCK=$(getconf CLK_TCK)
CPU_MODEL=$(lscpu | sed -n 's/^Model name: *//p')
CPU_MODEL="$CPU_MODEL (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p'))"
note "CPU: $CPU_MODEL; port $PORT; results in $OUT"

# utime + stime, fields 14 and 15 of /proc/PID/stat, counted after the `(comm)` field, which
# may hold spaces.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

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
  env "$@" taskset -c "$SERVER_CPU" "${cmd[@]}" >"$log" 2>&1 &
  SPID=$!
  for _ in $(seq 100); do
    curl -sk -o /dev/null "$scheme://127.0.0.1:$PORT/plaintext" && return 0
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.05
  done
  kill "$SPID" 2>/dev/null || true
  die "$server ($scheme) did not start: $(cat "$log")"
}

stop_server() {
  # TERM, not INT: a background job of a script starts with SIGINT ignored, and only
  # server-demo installs its own handler.
  kill -TERM "$SPID" 2>/dev/null || true
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

# ---------------------------------------------------------------------------------------------
# load
run_load() { # round scenario server scheme
  local round=$1 scenario=$2 server=$3 scheme=$4 wrk_args=() tag
  tag=$round-$scenario-$server-$scheme
  start_server "$server" "$scheme" "$tag"
  local path=/plaintext
  [[ $scenario == json ]] && path=/json
  [[ $scenario == pipelined ]] && wrk_args=(-s "$HERE/pipeline.lua" -- 16)
  local url=$scheme://127.0.0.1:$PORT$path
  if [[ $WARMUP != 0 ]]; then
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" "$url" "${wrk_args[@]}" >/dev/null
  fi
  local before after out reqs secs
  before=$(cpu_ticks "$SPID")
  out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$url" "${wrk_args[@]}")
  after=$(cpu_ticks "$SPID")
  stop_server
  echo "$out" >"$OUT/wrk-$tag.txt"
  if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
    note "warning: $tag: $(echo "$out" | grep "Non-2xx\|Socket errors")"
  fi
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  secs=$(echo "$out" | awk '/requests in/ {sub(/s,$/, "", $4); print $4}')
  awk -v r="$round" -v s="$scenario" -v d="$server" -v m="$scheme" -v n="$reqs" -v secs="$secs" \
    -v t=$((after - before)) -v hz="$CLK_TCK" \
    'BEGIN { printf "%s\t%s\t%s\t%s\t%.0f\t%.3f\n", r, s, d, m, n / secs, t / hz * 1e6 / n }' \
    >>"$LOAD"
}

load_phase() {
  LOAD=$OUT/load.tsv
  echo -e "round\tscenario\tserver\tscheme\treq_per_s\tcpu_us_per_req" >"$LOAD"
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
  {
    echo "load: medians over $ROUNDS round(s); wrk -t1 -c$CONNECTIONS -d${DURATION}s (after ${WARMUP}s of warm-up), pipelined: -s pipeline.lua -- 16"
    echo "server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU; TLS: TLSv1.3 $SUITE; CPU: $CPU_MODEL"
    printf "%-10s %-18s %11s %11s %11s %11s %10s\n" scenario server "http req/s" "https req/s" "http us/req" "https us/req" "https/http"
    awk -F'\t' "$AWK_MEDIAN"'
      NR > 1 { k = $2 "\t" $3; v[k, $4] = v[k, $4] " " $6; q[k, $4] = q[k, $4] " " $5; keys[k] = 1 }
      END {
        for (k in keys) {
          split(k, p, "\t")
          h = median(v[k, "http"]); s = median(v[k, "https"])
          printf "%-10s %-18s %11.0f %11.0f %11.3f %11.3f %10s\n", p[1], p[2], median(q[k, "http"]),
            median(q[k, "https"]), h, s, (h > 0 && s > 0) ? sprintf("%.3f", s / h) : "-"
        }
      }' "$LOAD" | sort
    echo
    echo "server-demo's https against the peers' https (CPU us per request, medians; issue #29's targets: https/http <= 1.08, vs nginx <= 0.80, vs hyper <= 0.92; pipelined vs hyper <= 0.70)"
    printf "%-10s %-18s %10s %10s %10s\n" scenario server "https/http" "/ nginx" "/ hyper"
    awk -F'\t' "$AWK_MEDIAN"'
      NR > 1 { v[$2, $3, $4] = v[$2, $3, $4] " " $6; sc[$2] = 1; sv[$3] = 1 }
      function ratio(a, b, target,   r) {
        if (a == 0 || b == 0) return "-"
        r = a / b
        return sprintf("%.3f%s", r, target == 0 ? " " : (r <= target ? "+" : "!"))
      }
      END {
        for (s in sc) for (d in sv) {
          if (d !~ /^server-demo/) continue
          own = median(v[s, d, "https"]); http = median(v[s, d, "http"])
          ng = median(v[s, "nginx", "https"]); hy = median(v[s, "hyper", "https"])
          pipe = s == "pipelined"
          printf "%-10s %-18s %10s %10s %10s\n", s, d, ratio(own, http, pipe ? 0 : 1.08),
            ratio(own, ng, pipe ? 0 : 0.80), ratio(own, hy, pipe ? 0.70 : 0.92)
        }
      }' "$LOAD" | sort
    echo "(+ target held, ! target missed)"
  } | tee "$OUT/load-summary.txt"
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
  HANDSHAKES=$OUT/handshakes.tsv
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
  {
    echo "handshakes: medians over $ROUNDS round(s); openssl s_time -www /plaintext -new|-reuse -time $HANDSHAKE_TIME (one client, one connection at a time, one HTTP/1.0 request each)"
    echo "server on CPU $SERVER_CPU, s_time on CPU $CLIENT_CPU; TLS: TLSv1.3 $SUITE, X25519, ECDSA P-256; CPU: $CPU_MODEL"
    printf "%-18s %-7s %10s %14s %10s\n" server kind "conn/s" "us/connection" "/ hyper"
    awk -F'\t' "$AWK_MEDIAN"'
      NR > 1 { v[$2, $3] = v[$2, $3] " " $5; q[$2, $3] = q[$2, $3] " " $4; sv[$2] = 1 }
      END {
        for (d in sv) for (m = 0; m < 2; m++) {
          mode = m ? "reuse" : "new"
          own = median(v[d, mode]); hy = median(v["hyper", mode])
          printf "%-18s %-7s %10.0f %14.1f %10s\n", d, m ? "resumed" : "full",
            median(q[d, mode]), own, (hy > 0 ? sprintf("%.3f", own / hy) : "-")
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
  ALLOCS=$OUT/allocs.tsv
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
  {
    echo "allocations per connection (full or resumed handshake, one HTTP/1.0 request, close): alloc-reports/preload/alloc_counter.c in LD_PRELOAD, the s_time runs above"
    printf "%-18s %-7s %12s %14s\n" server kind connections "allocs/conn"
    awk -F'\t' 'NR > 1 { printf "%-18s %-7s %12d %14.1f\n", $1, $2 == "new" ? "full" : "resumed", $3, $4 }' "$ALLOCS"
  } | tee "$OUT/allocs-summary.txt"
}

if has "$PHASES" load && has "$SCHEMES" https; then check_suite; fi
if has "$PHASES" load; then load_phase; fi
if has "$PHASES" handshakes; then handshake_phase; fi
if has "$PHASES" allocs; then allocs_phase; fi
