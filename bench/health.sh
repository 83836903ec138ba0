#!/usr/bin/env bash
# Load test of GET /health (spec section 5: p99 < 5 ms; clawd's target:
# p99 < 1 ms at 32 concurrent clients). Builds clawd, starts
# `clawd serve --transport tcp_loopback --port 0` in a throwaway HOME and
# measures /health twice:
#   latency:    hey, 32 concurrent clients at a fixed rate (-q per client),
#               the load a daemon sees from hooks and IDE plugins polling it;
#   throughput: wrk at saturation (32 connections, as fast as they can).
# Each run is repeated against bench/healthpeer (bare net/http, no checks),
# so the result reads as a ratio on a noisy shared machine.
#
# usage: bench/health.sh [-c CLIENTS] [-d SECONDS] [-q QPS_PER_CLIENT] [-t WRK_THREADS]
# needs: go, hey and wrk (apt-get install -y hey wrk)
set -euo pipefail
conns=32 secs=10 threads=2 qps=50
while getopts "c:d:q:t:" o; do
  case $o in
    c) conns=$OPTARG ;; d) secs=$OPTARG ;; q) qps=$OPTARG ;; t) threads=$OPTARG ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
done
for tool in wrk hey; do
  command -v $tool >/dev/null || { echo "health.sh: $tool is not installed (apt-get install -y hey wrk)" >&2; exit 2; }
done
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

(cd "$repo" && go build -o "$tmp/clawd" ./cmd/clawd && go build -o "$tmp/healthpeer" ./bench/healthpeer)
mkdir -p "$tmp/home" "$tmp/ws"
HOME=$tmp/home XDG_RUNTIME_DIR=$tmp XDG_CONFIG_HOME=$tmp/home/.config XDG_DATA_HOME=$tmp/home/.local/share \
  "$tmp/clawd" serve --workspace "$tmp/ws" --transport tcp_loopback --port 0 --log-level warn 2>"$tmp/clawd.log" &
pids+=($!)
for _ in $(seq 100); do
  addr=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$tmp/clawd.log" 2>/dev/null | head -1 | sed 's#http://##; s#/mcp##') || true
  [[ -n ${addr:-} ]] && break
  sleep 0.05
done
[[ -n ${addr:-} ]] || { echo "health.sh: clawd did not start:" >&2; cat "$tmp/clawd.log" >&2; exit 1; }
"$tmp/healthpeer" >"$tmp/peer.addr" &
pids+=($!)
for _ in $(seq 100); do [[ -s $tmp/peer.addr ]] && break; sleep 0.05; done
peer=$(cat "$tmp/peer.addr")

latency() { # name addr
  echo "== latency $1: hey -c $conns -q $qps -z ${secs}s http://$2/health"
  hey -c "$conns" -q "$qps" -z "$secs"s "http://$2/health" | tee "$tmp/$1.hey"
}
throughput() { # name addr
  echo "== throughput $1: wrk -t$threads -c$conns -d${secs}s --latency http://$2/health"
  wrk -t"$threads" -c"$conns" -d"$secs"s --latency "http://$2/health" | tee "$tmp/$1.wrk"
}
curl -sf "http://$addr/health" >/dev/null || { echo "health.sh: /health does not answer" >&2; exit 1; }
latency clawd "$addr"
latency peer "$peer"
throughput clawd "$addr"
throughput peer "$peer"

# hey prints seconds ("99% in 0.0008 secs"); report milliseconds.
heyp() { awk -v p="$2%" '$1==p && $2=="in" {printf "%.3f ms", $3*1000}' "$tmp/$1.hey"; }
heyrps() { awk '/Requests\/sec/ {print $2}' "$tmp/$1.hey"; }
heyok() { awk '/\[200\]/ {print $2}' "$tmp/$1.hey"; }
wrkp() { awk -v p="$2%" '$1==p {print $2}' "$tmp/$1.wrk"; }
wrkrps() { awk '/Requests\/sec/ {print $2}' "$tmp/$1.wrk"; }
echo
echo "summary ($conns clients, ${secs}s each, $(nproc) cores, $(date -u +%Y-%m-%d)):"
echo "  latency at $qps req/s per client ($((conns * qps)) req/s offered), hey:"
for n in clawd peer; do
  printf '    %-6s p50 %-10s p90 %-10s p99 %-10s req/s %-9s 200s %s\n' $n "$(heyp $n 50)" "$(heyp $n 90)" "$(heyp $n 99)" "$(heyrps $n)" "$(heyok $n)"
done
echo "  saturation, wrk -t$threads:"
for n in clawd peer; do
  printf '    %-6s p50 %-10s p90 %-10s p99 %-10s req/s %s\n' $n "$(wrkp $n 50)" "$(wrkp $n 90)" "$(wrkp $n 99)" "$(wrkrps $n)"
done
