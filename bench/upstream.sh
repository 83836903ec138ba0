#!/usr/bin/env bash
# clawd as a gateway to upstream MCP servers (docs/benchmarks.md, "Upstream servers"):
#   1. overhead of a proxied call: server-everything's echo through clawd against the same server
#      called directly, alternating in one run, plus clawd's own trivial read_file for reference;
#   2. tools/list latency with N fake upstreams connected, then with one SIGSTOPped (blackholed)
#      while a call to it is pending;
#   3. spawn-to-ready: clawd start -> all N upstreams connected and their tools listed, with the
#      fake server, with one of them never answering initialize, and with N/3 server-everything;
#   4. peers for the proxied call: echo called directly, through a proxy that only copies lines,
#      through a proxy built plainly on the official Go SDK, and through clawd, the order rotated
#      call by call in one run (upstreambench -mode floor).
# Each runs ROUNDS times; the summary is the median of each figure over the rounds.
#
# usage: bench/upstream.sh [ROUNDS (default 3)] [CALLS per round (default 5000)] [SERVERS (default 30), at least 6 and at most 200:
#   upstreambench takes 2-200 servers, and the server-everything spawn uses SERVERS/3)]
# Needs: Go, Node.js + npm (installs the pinned server-everything into the test cache on first use).
set -euo pipefail
rounds=${1:-3}
calls=${2:-5000}
servers=${3:-30}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/everything.sh"

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$here" && go build -o "$bin/clawd" ./cmd/clawd && go build -o "$bin/upstreambench" ./bench/cmd/upstreambench &&
  go build -o "$bin/fakeserver" ./internal/upstream/testdata/fakeserver)
ub=("$bin/upstreambench" -json -clawd "$bin/clawd" -fake "$bin/fakeserver" -everything "$everything")

results=$bin/results.jsonl
for r in $(seq "$rounds"); do
  echo "round $r/$rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  "${ub[@]}" -mode overhead -n "$calls" >>"$results"
  "${ub[@]}" -mode list -servers "$servers" -n $((calls / 5)) >>"$results"
  "${ub[@]}" -mode spawn -servers "$servers" -runs 5 >>"$results"
  "${ub[@]}" -mode spawn -servers "$servers" -runs 5 -hang 1 >>"$results"
  # A third as many server-everything: each costs about 0.9 s of CPU to start, so 30 at once on 2
  # cores outlast the 30 s connect timeout (docs/benchmarks.md).
  "${ub[@]}" -mode spawn -servers $((servers / 3)) -runs 2 -upstream everything >>"$results"
  "${ub[@]}" -mode floor -n "$calls" >>"$results"
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["label"], []).append(r)
med = lambda k, rs: statistics.median(r[k] for r in rs)
print(f"median of {max(len(v) for v in by.values())} rounds (microseconds)")
print(f"{'':72s} {'p50':>10s} {'p90':>10s} {'p99':>10s}")
for label, rs in by.items():
    notes = "; ".join(sorted({r.get("note", "") for r in rs} - {""}))
    print(f"{label:72s} {med('p50_us', rs):10.0f} {med('p90_us', rs):10.0f} {med('p99_us', rs):10.0f}  n={rs[0]['n']}")
    if notes:
        print(f"{'':72s} {notes}")
PY
