#!/usr/bin/env bash
# User-space instructions per request of a 16 KiB value sent by reference against the same
# value copied into the output (benches/src/bin/owned_body.rs), on one server under callgrind:
# warmed up, counters zeroed, SECS of wrk (16 connections) on one path, counters dumped; then
# the other path. Exact counts, immune to the machine's noise.
#
# usage: benches/load/owned_body.sh [--io epoll|uring] [--size BYTES] [--secs S]
set -Eeuo pipefail
io=epoll size=16384 secs=5
while (($#)); do
  case $1 in
    --io) io=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --secs) secs=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
for tool in valgrind callgrind_control wrk; do
  command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install valgrind wrk)" >&2; exit 2; }
done
cargo build --release -q -p bufslab-benches --bin owned_body
bin=${CARGO_TARGET_DIR:-target}/release/owned_body
out=$(mktemp -d)
log=$out/server.log
taskset -c 0 valgrind --tool=callgrind "--callgrind-out-file=$out/cg.out" \
  "$bin" --addr 127.0.0.1:0 --size "$size" --io "$io" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 100); do
  addr=$(sed -n 's/^listening on http:\/\///p' "$log")
  [[ -n $addr ]] && break
  sleep 0.2
done
[[ -n ${addr:-} ]] || { cat "$log" >&2; exit 1; }
echo "lscpu: $(lscpu | sed -n 's/^Model name: *//p'); io $io; value $size bytes; ${secs}s of wrk, 16 connections"
printf '%-8s %10s %16s %14s\n' path requests instructions instr/request
part=0
for path in owned copied; do
  taskset -c 1 wrk -t1 -c16 -d1s "http://$addr/$path" >/dev/null
  callgrind_control -z "$pid" >/dev/null 2>&1
  res=$(taskset -c 1 wrk -t1 -c16 "-d${secs}s" "http://$addr/$path")
  callgrind_control -d "$pid" >/dev/null 2>&1
  part=$((part + 1))
  req=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' <<<"$res")
  ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out/cg.out.$part" | head -1)
  printf '%-8s %10d %16d %14d\n' "/$path" "$req" "$ir" $((ir / req))
done
