#!/usr/bin/env bash
# Memory per idle HTTPS connection against the same connection over HTTP: server-demo under
# each driver, hyper + tokio-rustls and nginx, each with one worker. Usage: `tls_idle.sh --help`.
set -Eeuo pipefail

usage() {
  cat <<'EOF'
usage: benches/load/tls_idle.sh [flags]

Builds server-demo, hyper_baseline and idle_conns (release), makes a CA and an ECDSA P-256
certificate for localhost signed by it with openssl, then for each server, each N and each
scheme (http, https) starts the server fresh with one worker pinned to one CPU and no
keep-alive timeout within the run (the connections open one at a time and must all still be
there), warms it with 64 connections that each make one request (and, over https, a
handshake) and close, lets it settle, reads its VmRSS (nginx: its worker's) and, for
server-demo, /stats; then opens N keep-alive connections with idle_conns (one at a time, one
request each, every TLS handshake a full one), lets them settle and reads both again. Prints
the RSS growth per idle connection, https - http, and server-demo's pool.rented_blocks and
connections_open before and after (hyper and nginx: their established connections).

  --conns L         numbers of idle connections (env CONNS, default 2000,5000)
  --servers L       from demo-epoll,demo-uring,hyper,nginx (env SERVERS, default all)
  --settle S        seconds of rest before each reading (env SETTLE, default 2)
  --server-cpu L    CPUs of the server (env SERVER_CPU, default 0)
  --client-cpu L    CPUs of idle_conns (env CLIENT_CPU, default 1)
  --out DIR         raw results (env OUT, default $CARGO_TARGET_DIR/load-results/tls-idle-<time>)
  --no-build        use the binaries already built (env BUILD=0)
  -h, --help        this text

env SERVER_DEMO=PATH runs another server-demo binary, such as one built with
`--features dhat-heap`, whose /stats `allocations` the raw results record before and after.
EOF
}

PROG=tls_idle.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=common.sh
source "$HERE/common.sh"

CONNS=${CONNS:-2000,5000}
SERVERS=${SERVERS:-demo-epoll,demo-uring,hyper,nginx}
SETTLE=${SETTLE:-2}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BUILD=${BUILD:-1}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$TARGET/load-results/tls-idle-$(date +%Y%m%d-%H%M%S)}

while [[ $# -gt 0 ]]; do
  case $1 in
    --conns) need_value "$@"; CONNS=$2; shift 2 ;;
    --servers) need_value "$@"; SERVERS=$2; shift 2 ;;
    --settle) need_value "$@"; SETTLE=$2; shift 2 ;;
    --server-cpu) need_value "$@"; SERVER_CPU=$2; shift 2 ;;
    --client-cpu) need_value "$@"; CLIENT_CPU=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown flag $1 (see --help)" ;;
  esac
done

IFS=, read -r -a conns_list <<<"$CONNS"
IFS=, read -r -a servers <<<"$SERVERS"
max_conns=0
for n in "${conns_list[@]}"; do
  [[ $n =~ ^[0-9]+$ ]] || die "--conns: '$n' is not a number"
  ((n > max_conns)) && max_conns=$n
done
for s in "${servers[@]}"; do
  [[ $s =~ ^(demo-epoll|demo-uring|hyper|nginx)$ ]] || die "unknown server '$s'"
  [[ $s == nginx ]] && { command -v nginx >/dev/null || die "nginx is needed (apt-get install nginx-light)"; }
done
command -v openssl >/dev/null || die "openssl is needed to make the certificates"
command -v curl >/dev/null || die "curl is needed to read server-demo's /stats"
command -v ss >/dev/null || die "ss (iproute2) is needed to count nginx's connections"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# idle_conns and server-demo need N and some; nginx's worker is configured for twice N.
(($(ulimit -n) > 2 * max_conns + 512)) || die "open-file limit $(ulimit -n) is below $((2 * max_conns + 512))"

if [[ $BUILD == 1 ]]; then
  (cd "$ROOT" && cargo build --release -q -p server-demo -p bufslab-benches \
    --bin server-demo --bin idle_conns --bin hyper_baseline)
fi
DEMO=${SERVER_DEMO:-$TARGET/release/server-demo}
IDLE=$TARGET/release/idle_conns
HYPER=$TARGET/release/hyper_baseline
for b in "$DEMO" "$IDLE" "$HYPER"; do [[ -x $b ]] || die "no $b (build it, or drop --no-build)"; done
mkdir -p "$OUT"

# A CA and a leaf for localhost signed by it: rustls (idle_conns) checks the chain and the
# name, and takes no self-signed CA certificate as a server's own.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=bufslab-bench-ca -keyout "$OUT/ca-key.pem" -out "$OUT/ca.pem" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj /CN=localhost -keyout "$OUT/key.pem" -out "$OUT/leaf.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
  >"$OUT/leaf.ext"
openssl x509 -req -in "$OUT/leaf.csr" -CA "$OUT/ca.pem" -CAkey "$OUT/ca-key.pem" \
  -CAcreateserial -days 2 -extfile "$OUT/leaf.ext" -out "$OUT/cert.pem" 2>/dev/null

PORT=18444
SERVER_PID=
MEASURED_PID=
IDLE_PID=
cleanup() {
  [[ -n $IDLE_PID ]] && kill "$IDLE_PID" 2>/dev/null
  [[ -n $SERVER_PID ]] && kill -TERM "$SERVER_PID" 2>/dev/null
  true
}
trap cleanup EXIT

vm_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# worker_connections twice N: with fewer than a sixteenth of them free, nginx closes idle
# keep-alive connections to reuse them ("worker_connections are not enough, reusing connections").
nginx_conf() { # scheme
  local listen="127.0.0.1:$PORT" tls=
  if [[ $1 == https ]]; then
    listen="$listen ssl"
    tls="ssl_certificate $OUT/cert.pem; ssl_certificate_key $OUT/key.pem; ssl_protocols TLSv1.3;"
  fi
  cat <<EOF
worker_processes 1;
worker_rlimit_nofile $((2 * max_conns + 512));
daemon off;
pid $OUT/nginx.pid;
error_log $OUT/nginx-error.log warn;
events { worker_connections $((2 * max_conns + 256)); }
http {
  access_log off;
  keepalive_timeout 3600s;
  keepalive_requests 1000000;
  server {
    listen $listen;
    $tls
    location /plaintext { default_type text/plain; return 200 "Hello, World!"; }
  }
}
EOF
}

start_server() { # name scheme log
  local name=$1 scheme=$2 log=$3 flags=()
  case $name in
    demo-*)
      : >"$log"
      [[ $scheme == https ]] && flags=(--tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem")
      taskset -c "$SERVER_CPU" "$DEMO" --addr "127.0.0.1:$PORT" --workers 1 \
        --io "${name#demo-}" --idle-timeout-ms 3600000 "${flags[@]}" >"$log" 2>&1 &
      SERVER_PID=$!
      MEASURED_PID=$SERVER_PID
      for _ in $(seq 100); do grep -q listening "$log" && break; sleep 0.05; done
      grep -q listening "$log" || die "$name did not start: $(cat "$log")"
      ;;
    hyper)
      # hyper_baseline sets no keep-alive or header timeout.
      [[ $scheme == https ]] && flags=(--tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem")
      taskset -c "$SERVER_CPU" "$HYPER" --addr "127.0.0.1:$PORT" --workers 1 "${flags[@]}" \
        >"$log" 2>&1 &
      SERVER_PID=$!
      MEASURED_PID=$SERVER_PID
      for _ in $(seq 100); do
        curl -sf -o /dev/null --cacert "$OUT/ca.pem" --resolve "localhost:$PORT:127.0.0.1" \
          "$scheme://localhost:$PORT/plaintext" && break
        sleep 0.05
      done
      kill -0 "$SERVER_PID" 2>/dev/null || die "hyper did not start: $(cat "$log")"
      ;;
    nginx)
      nginx_conf "$scheme" >"$OUT/nginx-$scheme.conf"
      : >"$OUT/nginx-error.log"
      taskset -c "$SERVER_CPU" nginx -p "$OUT" -c "$OUT/nginx-$scheme.conf" >"$log" 2>&1 &
      SERVER_PID=$!
      MEASURED_PID=
      for _ in $(seq 100); do
        MEASURED_PID=$(pgrep -P "$SERVER_PID" | head -1 || true)
        [[ -n $MEASURED_PID ]] && break
        sleep 0.05
      done
      [[ -n $MEASURED_PID ]] || die "nginx did not start: $(cat "$log" "$OUT/nginx-error.log")"
      ;;
  esac
}

stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# idle_conns against the server: N SCHEME [extra flags]
idle_flags() {
  local f=(--addr "127.0.0.1:$PORT" --conns "$1")
  [[ $2 == https ]] && f+=(--tls --ca "$OUT/ca.pem" --server-name localhost)
  echo "${f[@]}"
}

# server-demo's /stats as "rented_blocks connections_open allocations"; for hyper and nginx,
# which have no such page, "- N -" with N the established TCP connections on the port.
demo_stats() { # name scheme
  if [[ $1 != demo-* ]]; then
    echo "- $(ss -Htn state established "( sport = :$PORT )" | wc -l) -"
    return
  fi
  curl -sf --cacert "$OUT/ca.pem" --resolve "localhost:$PORT:127.0.0.1" \
    "$2://localhost:$PORT/stats" |
    jq -r '"\(.pool.rented_blocks) \(.connections_open) \(.allocations // "-")"'
}

RESULTS=$OUT/tls_idle.tsv
printf 'server\tscheme\tconns\trss_before_kb\trss_after_kb\tbytes_per_conn\trented_before\trented_after\topen_before\topen_after\tallocations_before\tallocations_after\n' >"$RESULTS"
CPU_MODEL=$(lscpu | sed -n 's/^Model name: *//p')
note "CPU: $CPU_MODEL (model $(lscpu | sed -n 's/^Model: *//p')); results in $OUT"

for name in "${servers[@]}"; do
  for n in "${conns_list[@]}"; do
    for scheme in http https; do
      log=$OUT/server-$name-$scheme-$n.log
      start_server "$name" "$scheme" "$log"
      # shellcheck disable=SC2046 # idle_flags' words are meant to split
      taskset -c "$CLIENT_CPU" "$IDLE" $(idle_flags 64 "$scheme") </dev/null >/dev/null 2>"$OUT/warm-$name-$scheme-$n.err" ||
        die "warm-up of $name over $scheme failed: $(cat "$OUT/warm-$name-$scheme-$n.err")"
      sleep "$SETTLE"
      read -r rented_before open_before alloc_before < <(demo_stats "$name" "$scheme")
      before=$(vm_rss_kb "$MEASURED_PID")
      ilog=$OUT/idle-$name-$scheme-$n.log
      : >"$ilog"
      # shellcheck disable=SC2046
      taskset -c "$CLIENT_CPU" "$IDLE" $(idle_flags "$n" "$scheme") --hold-secs 600 </dev/null >"$ilog" 2>&1 &
      IDLE_PID=$!
      for ((i = 0; i < 3000; i++)); do
        grep -q '^ready' "$ilog" && break
        kill -0 "$IDLE_PID" 2>/dev/null || die "idle_conns failed against $name over $scheme: $(cat "$ilog")"
        sleep 0.1
      done
      grep -q '^ready' "$ilog" || die "idle_conns did not get ready in 300 s against $name"
      sleep "$SETTLE"
      after=$(vm_rss_kb "$MEASURED_PID")
      read -r rented_after open_after alloc_after < <(demo_stats "$name" "$scheme")
      if [[ $name == nginx ]] && grep -q 'reusing connections' "$OUT/nginx-error.log"; then
        die "nginx closed idle connections to reuse them: $(tail -1 "$OUT/nginx-error.log")"
      fi
      kill "$IDLE_PID" 2>/dev/null || true
      wait "$IDLE_PID" 2>/dev/null || true
      IDLE_PID=
      stop_server
      awk -v s="$name" -v m="$scheme" -v n="$n" -v b="$before" -v a="$after" \
        -v rb="$rented_before" -v ra="$rented_after" -v ob="$open_before" -v oa="$open_after" \
        -v ab="$alloc_before" -v aa="$alloc_after" \
        'BEGIN { printf "%s\t%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\n", s, m, n, b, a, (a - b) * 1024 / n, rb, ra, ob, oa, ab, aa }' |
        tee -a "$RESULTS" >&2
    done
  done
done

{
  echo "RSS per idle keep-alive connection, one worker on CPU $SERVER_CPU, idle_conns on CPU $CLIENT_CPU"
  echo "CPU: $CPU_MODEL"
  awk -F'\t' 'NR > 1 {
      k = $1 "\t" $3; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
      per[k, $2] = $6; rb[k, $2] = $7; ra[k, $2] = $8; oa[k, $2] = $10
    }
    END {
      printf "%-11s %6s %14s %15s %14s   %s\n", "server", "conns", "http B/conn", "https B/conn", "https - http", "rented blocks before/after, open after (http; https)"
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, f, "\t")
        printf "%-11s %6d %14d %15d %14d   %s/%s, %s; %s/%s, %s\n", f[1], f[2], per[k, "http"], per[k, "https"],
          per[k, "https"] - per[k, "http"], rb[k, "http"], ra[k, "http"], oa[k, "http"], rb[k, "https"], ra[k, "https"], oa[k, "https"]
      }
    }' "$RESULTS"
} | tee "$OUT/summary.txt"
