#!/usr/bin/env bash
# Where a proxied tools/call's time goes (docs/benchmarks.md, "Where the proxied call's time goes"):
# runs upstreambench -mode overhead (server-everything's echo through clawd, alternating with the
# same server called directly), records the three processes' read and write system calls for a
# second with perf, and splits each call into the hop into clawd, clawd's work on the request, the
# upstream's round trip, clawd's work on the answer and the hop back (bench/cmd/calltrace).
#
# usage: bench/calltrace.sh [CLAWD binary (default: built from this checkout)] [SECONDS (default 1)]
# Needs: Go, Node.js + npm, perf, and the right to trace system calls (root, or
# kernel.perf_event_paranoid <= -1 with tracefs readable).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
secs=${2:-1}
command -v perf >/dev/null || { echo "calltrace.sh: perf is not installed" >&2; exit 2; }
. "$here/bench/everything.sh"
bin=$(mktemp -d)
trap 'kill "$bench" 2>/dev/null; rm -rf "$bin"' EXIT
(cd "$here" && go build -o "$bin/upstreambench" ./bench/cmd/upstreambench && go build -o "$bin/calltrace" ./bench/cmd/calltrace)
clawd=${1:-}
if [ -z "$clawd" ]; then
  (cd "$here" && go build -o "$bin/clawd" ./cmd/clawd)
  clawd=$bin/clawd
fi
"$bin/upstreambench" -mode overhead -everything "$everything" -clawd "$clawd" -n 1000000 >"$bin/bench.log" 2>&1 &
bench=$!
# Wait until both servers answer calls: clawd's upstream and the direct one.
cpid= up= direct=
for _ in $(seq 100); do
  sleep 0.2
  cpid=$(pgrep -P "$bench" -f ' serve ' | head -1 || true)
  [ -n "$cpid" ] && up=$(pgrep -P "$cpid" | head -1 || true)
  direct=$(pgrep -P "$bench" -f 'index.js' | head -1 || true)
  [ -n "$cpid" ] && [ -n "$up" ] && [ -n "$direct" ] && break
done
if [ -z "$cpid" ] || [ -z "$up" ] || [ -z "$direct" ]; then
  echo "calltrace.sh: the benchmark did not start its processes; its output:" >&2
  cat "$bin/bench.log" >&2
  exit 1
fi
sleep 3 # past the warm-up
perf record -q -e syscalls:sys_enter_read,syscalls:sys_exit_read,syscalls:sys_enter_write \
  -p "$bench,$cpid,$up,$direct" -o "$bin/perf.data" -- sleep "$secs" >/dev/null 2>&1
perf script -i "$bin/perf.data" -F comm,pid,tid,time,event,trace 2>/dev/null |
  "$bin/calltrace" -clawd "$cpid" -upstream "$up" -direct "$direct"
