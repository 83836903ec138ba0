#!/usr/bin/env bash
# Compares clawd builds over stdio in one run: for each round it alternates
# the builds (order reversed every other round) through the same requests as
# bench/stdio.sh (read_file of a 6-byte file, of 10 KB, and spawn -> initialize
# reply) and prints the median of each figure per build. Use it for the
# before/after of a change: build the previous commit into one directory and
# the change into another.
#
# usage: bench/ab.sh [-r ROUNDS (5)] [-n CALLS (20000)] NAME=BINARY NAME=BINARY...
#   e.g. bench/ab.sh before=/tmp/before/clawd after=/tmp/after/clawd
set -euo pipefail
rounds=5
calls=20000
while getopts r:n: o; do
  case $o in
    r) rounds=$OPTARG ;;
    n) calls=$OPTARG ;;
    *) echo "usage: $0 [-r ROUNDS] [-n CALLS] NAME=BINARY..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if (($# < 1)); then
  echo "usage: $0 [-r ROUNDS] [-n CALLS] NAME=BINARY..." >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$bin" "$work"' EXIT
(cd "$here" && go build -o "$bin/mcpbench" ./bench/cmd/mcpbench)

ws=$work/ws
mkdir -p "$ws"
head -c 10240 /dev/urandom | base64 -w 100 | head -c 10240 > "$ws/10k.txt"
printf 'hello\n' > "$ws/tiny.txt"

builds=("$@")
results=$work/results.jsonl
for r in $(seq "$rounds"); do
  echo "round $r/$rounds" >&2
  order=("${builds[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[i]}"); done
  fi
  for b in "${order[@]}"; do
    name=${b%%=*}
    exe=${b#*=}
    # Each build keeps its config, audit database and runtime files in its
    # own HOME: builds may differ in their database schema.
    h=$work/home-$name
    mkdir -p "$h"
    export HOME=$h XDG_CONFIG_HOME=$h/.config XDG_DATA_HOME=$h/.local/share XDG_RUNTIME_DIR=$h
    clawd=("$exe" serve --workspace "$ws" --client cc)
    "$bin/mcpbench" -json -n "$calls" -label "$name|read_file tiny" -tool read_file -args '{"path":"tiny.txt"}' -- "${clawd[@]}" >>"$results"
    "$bin/mcpbench" -json -n "$calls" -label "$name|read_file 10KB" -tool read_file -args '{"path":"10k.txt"}' -- "${clawd[@]}" >>"$results"
    "$bin/mcpbench" -json -mode spawn -runs 20 -label "$name|spawn" -- "${clawd[@]}" >>"$results"
  done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["label"], []).append(r)
med = statistics.median
print(f"{'build | figure (median of rounds)':34s} {'calls/s':>9s} {'min-max':>15s} {'p50':>9s} {'p99':>9s}")
for label, rs in by.items():
    if rs[0]["mode"] == "spawn":
        print(f"{label:34s} {'':>9s} {'':>15s} {med([r['p50_us'] for r in rs])/1000:8.1f}ms {med([r['p99_us'] for r in rs])/1000:8.1f}ms")
    else:
        cps = [r["per_second"] for r in rs]
        print(f"{label:34s} {med(cps):9.0f} {min(cps):7.0f}-{max(cps):<7.0f} {med([r['p50_us'] for r in rs]):8.0f}us {med([r['p99_us'] for r in rs]):8.0f}us")
PY
