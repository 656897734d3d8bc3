#!/usr/bin/env bash
# HTTPS against HTTP on the same server: server-demo's CPU per keep-alive request with and
# without TLS, under each driver, paired in every round. Usage: `tls.sh --help`.
set -Eeuo pipefail

usage() {
  cat <<'EOF'
usage: benches/load/tls.sh [flags]

Builds server-demo (release), makes a self-signed ECDSA P-256 certificate with openssl, then
for each round, scenario, driver and scheme (http, https; the order alternates from round to
round) starts server-demo with one worker pinned to one CPU, warms it up with wrk, measures a
run of wrk pinned to another CPU, and records requests/s and the server's CPU time per request
(user + system from /proc/PID/stat, before and after the measured run). Prints medians over
the rounds and the ratio https/http per scenario and driver.

  --rounds N        rounds (env ROUNDS, default 3)
  --duration S      seconds per measured run (env DURATION, default 5)
  --warmup S        seconds of load before each measured run (env WARMUP, default 1)
  --scenarios L     from plaintext,json,pipelined (16 deep) (env SCENARIOS, default all)
  --drivers L       from epoll,uring (env DRIVERS, default both)
  --connections N   wrk connections (env CONNECTIONS, default 16)
  --server-cpu L    CPUs of the server (env SERVER_CPU, default 0)
  --client-cpu L    CPUs of wrk (env CLIENT_CPU, default 1)
  --out DIR         raw results (env OUT, default $CARGO_TARGET_DIR/load-results/tls-<time>)
  --no-build        use the binary already built (env BUILD=0)
  -h, --help        this text
EOF
}

PROG=tls.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=common.sh
source "$HERE/common.sh"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
SCENARIOS=${SCENARIOS:-plaintext,json,pipelined}
DRIVERS=${DRIVERS:-epoll,uring}
CONNECTIONS=${CONNECTIONS:-16}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BUILD=${BUILD:-1}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$TARGET/load-results/tls-$(date +%Y%m%d-%H%M%S)}

while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) need_value "$@"; ROUNDS=$2; shift 2 ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --warmup) need_value "$@"; WARMUP=$2; shift 2 ;;
    --scenarios) need_value "$@"; SCENARIOS=$2; shift 2 ;;
    --drivers) need_value "$@"; DRIVERS=$2; shift 2 ;;
    --connections) need_value "$@"; CONNECTIONS=$2; shift 2 ;;
    --server-cpu) need_value "$@"; SERVER_CPU=$2; shift 2 ;;
    --client-cpu) need_value "$@"; CLIENT_CPU=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown flag $1 (see --help)" ;;
  esac
done

command -v wrk >/dev/null || die "wrk is needed (apt-get install wrk)"
command -v openssl >/dev/null || die "openssl is needed to make the test certificate"
if [[ $BUILD == 1 ]]; then
  (cd "$ROOT" && cargo build --release -q -p server-demo)
fi
BIN=$TARGET/release/server-demo
[[ -x $BIN ]] || die "no $BIN (build it, or drop --no-build)"
mkdir -p "$OUT"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=localhost -keyout "$OUT/key.pem" -out "$OUT/cert.pem" 2>/dev/null
CLK_TCK=$(getconf CLK_TCK)
PORT=18443
RESULTS=$OUT/runs.tsv
echo -e "round\tscenario\tdriver\tscheme\treq_per_s\tcpu_us_per_req" > "$RESULTS"
note "CPU: $(lscpu | sed -n 's/^Model name: *//p'); results in $OUT"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_one() { # round scenario driver scheme
  local round=$1 scenario=$2 driver=$3 scheme=$4 flags=() wrk_args=() log
  [[ $scheme == https ]] && flags=(--tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem")
  log=$OUT/server-$round-$scenario-$driver-$scheme.log
  taskset -c "$SERVER_CPU" "$BIN" --addr 127.0.0.1:$PORT --workers 1 --io "$driver" \
    "${flags[@]}" >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do grep -q listening "$log" && break; sleep 0.05; done
  grep -q listening "$log" || { kill "$pid"; die "server did not start: $(cat "$log")"; }
  local path=/plaintext
  [[ $scenario == json ]] && path=/json
  [[ $scenario == pipelined ]] && wrk_args=(-s "$HERE/pipeline.lua" -- 16)
  local url=$scheme://127.0.0.1:$PORT$path
  if [[ $WARMUP != 0 ]]; then
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" "$url" "${wrk_args[@]}" >/dev/null
  fi
  local before after out reqs
  before=$(cpu_ticks "$pid")
  out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$url" "${wrk_args[@]}")
  after=$(cpu_ticks "$pid")
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  echo "$out" > "$OUT/wrk-$round-$scenario-$driver-$scheme.txt"
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  echo "$out" | grep -q "Non-2xx\|Socket errors" && note "warning: $scheme $scenario $driver: $(echo "$out" | grep "Non-2xx\|Socket errors")"
  awk -v r="$round" -v s="$scenario" -v d="$driver" -v m="$scheme" -v n="$reqs" \
    -v t=$((after - before)) -v hz="$CLK_TCK" -v dur="$DURATION" \
    'BEGIN { printf "%s\t%s\t%s\t%s\t%.0f\t%.3f\n", r, s, d, m, n / dur, t / hz * 1e6 / n }' \
    | tee -a "$RESULTS"
}

IFS=, read -r -a scenarios <<<"$SCENARIOS"
IFS=, read -r -a drivers <<<"$DRIVERS"
for round in $(seq "$ROUNDS"); do
  schemes=(http https)
  (( round % 2 == 0 )) && schemes=(https http)
  for scenario in "${scenarios[@]}"; do
    for driver in "${drivers[@]}"; do
      for scheme in "${schemes[@]}"; do
        run_one "$round" "$scenario" "$driver" "$scheme" >/dev/null
      done
    done
  done
done

{
  echo "medians over $ROUNDS round(s), $CONNECTIONS connections, server on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU"
  echo "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
  printf "%-10s %-6s %12s %12s %12s %12s %8s\n" scenario driver "http req/s" "https req/s" "http us/req" "https us/req" ratio
  awk -F'\t' 'NR > 1 { k = $2 "\t" $3; v[k, $4] = v[k, $4] " " $6; q[k, $4] = q[k, $4] " " $5; keys[k] = 1 }
    function median(list,   a, n, i, j, t) {
      n = split(list, a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { for (k in keys) { split(k, p, "\t")
      h = median(v[k, "http"]); s = median(v[k, "https"])
      printf "%-10s %-6s %12.0f %12.0f %12.3f %12.3f %8.3f\n", p[1], p[2], median(q[k, "http"]), median(q[k, "https"]), h, s, s / h } }' "$RESULTS" | sort
} | tee "$OUT/summary.txt"
