#!/usr/bin/env bash
# Drives `clawd serve` and the reference Node server
# (@modelcontextprotocol/server-filesystem) over stdio with the same requests,
# alternating them in one run, and prints the median of each figure.
#
# usage: bench/stdio.sh [ROUNDS (default 5)] [CALLS per round (default 20000)]
# Needs: Go, Node.js + npm (installs the Node server into $BENCH_HOME on first use).
set -euo pipefail
rounds=${1:-5}
calls=${2:-20000}
here=$(cd "$(dirname "$0")/.." && pwd)
home=${BENCH_HOME:-$HOME/.cache/clawd-bench}
node_pkg="@modelcontextprotocol/server-filesystem@2026.8.31"
mkdir -p "$home"

if [[ ! -f $home/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js ]]; then
  mkdir -p "$home/node"
  (cd "$home/node" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --loglevel=error "$node_pkg" >&2)
fi
nodefs=$home/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

bin=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$bin" "$work"' EXIT
(cd "$here" && go build -o "$bin/clawd" ./cmd/clawd && go build -o "$bin/mcpbench" ./bench/cmd/mcpbench)

ws=$work/ws
mkdir -p "$ws" "$work/home"
head -c 10240 /dev/urandom | base64 -w 100 | head -c 10240 > "$ws/10k.txt"
printf 'hello\n' > "$ws/tiny.txt"
# clawd keeps its config, data (audit database) and runtime files under HOME.
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share XDG_RUNTIME_DIR=$work/home
clawd=("$bin/clawd" serve --workspace "$ws" --client cc)
node=(node "$nodefs" "$ws")

results=$work/results.jsonl
for r in $(seq "$rounds"); do
  echo "round $r/$rounds" >&2
  "$bin/mcpbench" -json -n "$calls" -label "clawd read_file tiny (trivial call)" -tool read_file -args '{"path":"tiny.txt"}' -- "${clawd[@]}" >>"$results"
  "$bin/mcpbench" -json -n "$calls" -label "clawd read_file 10KB" -tool read_file -args '{"path":"10k.txt"}' -- "${clawd[@]}" >>"$results"
  "$bin/mcpbench" -json -n "$((calls / 4))" -label "node read_text_file 10KB" -tool read_text_file -args "{\"path\":\"$ws/10k.txt\"}" -- "${node[@]}" >>"$results"
  "$bin/mcpbench" -json -mode spawn -runs 20 -label "clawd spawn" -- "${clawd[@]}" >>"$results"
  "$bin/mcpbench" -json -mode spawn -runs 10 -label "node spawn" -- "${node[@]}" >>"$results"
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["label"], []).append(r)
med = lambda xs: statistics.median(xs)
print(f"{'median of %d rounds' % len(next(iter(by.values()))):40s} {'calls/s':>10s} {'p50':>9s} {'p99':>9s}")
out = {}
for label, rs in by.items():
    if rs[0]["mode"] == "spawn":
        p50 = med([r["p50_us"] for r in rs]) / 1000
        out[label] = p50
        print(f"{label:40s} {'':>10s} {p50:8.1f}ms {med([r['p99_us'] for r in rs])/1000:8.1f}ms  (spawn -> initialize reply)")
    else:
        cps = med([r["per_second"] for r in rs])
        out[label] = cps
        print(f"{label:40s} {cps:10.0f} {med([r['p50_us'] for r in rs]):8.0f}us {med([r['p99_us'] for r in rs]):8.0f}us")
a, b = out.get("clawd read_file 10KB"), out.get("node read_text_file 10KB")
if a and b:
    print(f"read_file 10KB: clawd / node = {a / b:.1f}x calls/s")
a, b = out.get("clawd spawn"), out.get("node spawn")
if a and b:
    print(f"spawn -> initialize: node / clawd = {b / a:.1f}x")
PY
