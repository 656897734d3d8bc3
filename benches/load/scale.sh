#!/usr/bin/env bash
# Scaling of server-demo's two I/O drivers with the worker count, one command.
# Usage and the meaning of every column: benches/load/README.md, or `scale.sh --help`.
set -Eeuo pipefail

usage() {
  cat <<'EOF'
usage: benches/load/scale.sh [flags]

Splits the CPUs in two halves: the servers are pinned to the first, wrk (one thread per CPU)
to the second. For each worker count from 1 to the size of the first half, runs the load part
of run.sh with server-demo under both drivers (server-demo = --io epoll, demo-uring =
--io uring; paired rounds, the order alternating) and prints the medians of req/s and server
CPU per request per worker count, and the ratios demo-uring / server-demo.
On a 2-core machine that is one worker, on CPU 0, with wrk on CPU 1.

  --max-workers N   the largest worker count (env MAX_WORKERS, default: half the CPUs)
  --rounds N        rounds per worker count (env ROUNDS, default 3)
  --duration S      seconds per measured wrk run (env DURATION, default 10)
  --warmup S        seconds of wrk before each measured run (env WARMUP, default 3)
  --scenario NAME   one of run.sh's scenarios: pipelined, plaintext, json, c1024, newconn
                    (env SCENARIO, default plaintext)
  --out DIR         where raw results go (env OUT, default
                    $CARGO_TARGET_DIR/load-results/scale-<time>)
  --no-build        use the binaries already built (env BUILD=0)
  -h, --help        this text
EOF
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

MAX_WORKERS=${MAX_WORKERS:-}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-3}
SCENARIO=${SCENARIO:-plaintext}
OUT=${OUT:-}
BUILD=${BUILD:-1}

PROG=scale.sh
# shellcheck source=benches/load/common.sh
. "$here/common.sh"
while [[ $# -gt 0 ]]; do
  case $1 in
    --max-workers) need_value "$@"; MAX_WORKERS=$2; shift 2 ;;
    --rounds) need_value "$@"; ROUNDS=$2; shift 2 ;;
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --warmup) need_value "$@"; WARMUP=$2; shift 2 ;;
    --scenario) need_value "$@"; SCENARIO=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown flag $1" ;;
  esac
done

cpus=$(nproc)
((cpus >= 2)) || die "needs at least 2 CPUs (one for the servers, one for wrk), found $cpus"
half=$((cpus / 2))
MAX_WORKERS=${MAX_WORKERS:-$half}
for v in MAX_WORKERS ROUNDS DURATION WARMUP; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((MAX_WORKERS > 0 && ROUNDS > 0 && DURATION > 0)) || die "MAX_WORKERS, ROUNDS and DURATION must be positive"
[[ $SCENARIO =~ ^(pipelined|plaintext|json|c1024|newconn)$ ]] || die "unknown scenario '$SCENARIO'"
if ((MAX_WORKERS > half)); then
  note "WARNING: $MAX_WORKERS workers on $half CPU(s): from $((half + 1)) workers on they share CPUs"
fi
server_cpus=0-$((half - 1))
client_cpus=$half-$((cpus - 1))

target_dir=${CARGO_TARGET_DIR:-$root/target}
[[ $target_dir == /* ]] || target_dir=$root/$target_dir
if [[ -z $OUT ]]; then
  OUT=$target_dir/load-results/scale-$(date +%Y%m%d-%H%M%S)
fi
mkdir -p "$OUT"

summary=$OUT/summary.txt
{
  echo "scale: $(date -u +%Y-%m-%dT%H:%M:%SZ), $cpus CPUs: servers on CPUs $server_cpus, wrk on CPUs $client_cpus"
  echo "workers 1..$MAX_WORKERS, scenario $SCENARIO, rounds $ROUNDS, ${DURATION}s per run after ${WARMUP}s warm-up; raw results in $OUT"
} | tee "$summary"

# Each worker count is one run.sh, bounded by its runs plus a minute per run for starts, stops
# and the warm-up; `timeout` ends it if something hangs all the same.
per_count=$((ROUNDS * 2 * (DURATION + WARMUP + 60) + 120))
build=()
((BUILD == 1)) || build=(--no-build)
for ((w = 1; w <= MAX_WORKERS; w++)); do
  note "$w worker(s)"
  timeout --signal=TERM --kill-after=10 "$per_count" "$here/run.sh" "${build[@]}" --parts load \
    --servers server-demo,demo-uring --scenarios "$SCENARIO" --workers "$w" \
    --server-cpu "$server_cpus" --client-cpu "$client_cpus" --rounds "$ROUNDS" \
    --duration "$DURATION" --warmup "$WARMUP" --out "$OUT/workers-$w" >"$OUT/run-workers-$w.log" 2>&1 ||
    die "run.sh with $w worker(s) failed (status $?): see $OUT/run-workers-$w.log"
  build=(--no-build)
  if grep -q 'leaving demo-uring out' "$OUT/run-workers-$w.log"; then
    grep -h 'leaving demo-uring out' "$OUT/run-workers-$w.log" | head -n 1 >&2
  fi
done

# One table over every worker count: medians over the rounds, then uring/epoll ratios of the
# medians.
echo | tee -a "$summary"
for ((w = 1; w <= MAX_WORKERS; w++)); do
  awk -F'\t' -v w="$w" 'NR > 1 { print w "\t" $0 }' "$OUT/workers-$w/results.tsv"
done | awk -F'\t' "$AWK_MEDIAN"'
  {
    # Fields: workers, then run.sh results.tsv: round scenario server requests duration_us rps
    # p50_us p99_us errors user_us_per_req sys_us_per_req server_cpu_pct.
    k = $1 SUBSEP $4
    if (!($1 in seen)) { seen[$1] = 1; ws[++nw] = $1 }
    rps[k] = rps[k] " " $7; usr[k] = usr[k] " " $11; sys[k] = sys[k] " " $12
    pct[k] = pct[k] " " $13; err[k] += $10; runs[k]++
  }
  END {
    printf "%-8s %-12s %12s %26s %9s %7s %5s\n", "workers", "server", "req/s", "server CPU/request (us)", "srv CPU", "errors", "runs"
    printf "%-8s %-12s %12s %26s %9s %7s %5s\n", "", "", "", "user +   sys =  total", "", "", ""
    n = split("server-demo demo-uring", sv, " ")
    for (i = 1; i <= nw; i++) {
      for (j = 1; j <= n; j++) {
        k = ws[i] SUBSEP sv[j]
        if (!(k in runs)) continue
        r[j] = median(rps[k]); u[j] = median(usr[k]); s[j] = median(sys[k])
        printf "%-8s %-12s %12.0f %8.2f + %5.2f = %6.2f %8.0f%% %7d %5d\n", ws[i], sv[j], r[j], u[j], s[j], u[j] + s[j], median(pct[k]), err[k], runs[k]
      }
      a = ws[i] SUBSEP "demo-uring"; b = ws[i] SUBSEP "server-demo"
      if (!((a in runs) && (b in runs) && r[1] > 0 && u[1] + s[1] > 0)) continue
      ur = u[1] > 0 ? u[2] / u[1] : 0
      sr = s[1] > 0 ? s[2] / s[1] : 0
      printf "%-8s %-12s %11.2fx %7.2fx + %4.2fx = %5.2fx\n", ws[i], "uring/epoll", r[2] / r[1], ur, sr, (u[2] + s[2]) / (u[1] + s[1])
    }
  }' | tee -a "$summary"
echo
note "summary in $summary"
