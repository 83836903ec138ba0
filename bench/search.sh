#!/usr/bin/env bash
# bench/search.sh: time clawd's search tool against ripgrep on a copy of the
# Go source tree ($(go env GOROOT)/src, ~11,500 files, ~150 MB on disk).
#
# Both run on the same tree in the same run, alternating per round (rg, then
# clawd) after an untimed warm-up, so both see a warm page cache and the same
# machine load; the program prints medians and the ratio clawd/rg per query.
# clawd is measured in-process (bench/cmd/searchbench calls tools.NewSearch
# directly, so JSON-RPC and stdio are not included); rg as a process. See
# docs/search.md for the rg flags that make the two do the same work. A last
# section repeats three queries end to end: `clawd serve` over stdio (the
# whole chain, audit commit included) against rg as a process.
#
# Environment:
#   ROUNDS=N         timed rounds per query (default 7)
#   BENCH_TREE=DIR   where the copy lives (default ${TMPDIR:-/tmp}/clawd-search-bench/src);
#                    it is made once and reused
#   ONLY=TEXT        run only the queries whose name contains TEXT
#   STDIO_CALLS=N    tools/call per round in the stdio section (default 15)
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-7}
tree=${BENCH_TREE:-${TMPDIR:-/tmp}/clawd-search-bench/src}

if ! command -v rg >/dev/null 2>&1; then
	echo "bench/search.sh: installing ripgrep (Debian package)" >&2
	if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
	$sudo apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq ripgrep >/dev/null
fi

if [ ! -d "$tree" ]; then
	goroot=$(go env GOROOT)
	echo "bench/search.sh: copying $goroot/src to $tree (once)" >&2
	mkdir -p "$(dirname "$tree")"
	tmp=$(mktemp -d "$(dirname "$tree")/.copy.XXXXXX")
	cp -a "$goroot/src" "$tmp/src"
	mv "$tmp/src" "$tree"
	rmdir "$tmp"
fi

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/searchbench" ./bench/cmd/searchbench

echo "ripgrep: $(rg --version | head -1); go: $(go env GOVERSION); $(nproc) CPUs"
echo "tree: $(find "$tree" -type f | wc -l) files, $(du -sh "$tree" | cut -f1)"
"$bin/searchbench" -dir "$tree" -rounds "$rounds" -only "${ONLY:-}"

# The same kind of query end to end: clawd serve over stdio (JSON-RPC, the
# chain with its audit commit, result encoding) against rg as a process,
# alternating, medians of N calls each.
go build -o "$bin/clawd" ./cmd/clawd
go build -o "$bin/mcpbench" ./bench/cmd/mcpbench
home=$(mktemp -d)
trap 'rm -rf "$bin" "$home"' EXIT
n=${STDIO_CALLS:-15}
echo
echo "over stdio (clawd serve, $n sequential tools/call each) vs rg, alternating:"
for q in "func:true" "fmt.Errorf:true" "nosuchstringanywhere:false"; do
  query=${q%%:*} cs=${q##*:}
  flag=-s; [ "$cs" = false ] && flag=-i
  rg_ms=()
  clawd_ms=()
  for r in 1 2 3; do
    t0=$(date +%s%N)
    for _ in $(seq "$n"); do
      rg --count-matches --hidden --no-require-git --no-ignore-global --no-ignore-parent --max-filesize 64M --no-config -F $flag -- "$query" "$tree" >/dev/null || true
    done
    rg_ms+=($(( ($(date +%s%N) - t0) / n / 1000000 )))
    p50=$(HOME=$home XDG_DATA_HOME=$home/data XDG_CONFIG_HOME=$home/cfg XDG_RUNTIME_DIR=$home \
      "$bin/mcpbench" -json -n "$n" -warmup 1 -tool search \
      -args "{\"query\":\"$query\",\"case_sensitive\":$cs}" -- "$bin/clawd" serve --workspace "$tree" --client cc |
      sed 's/.*"p50_us":\([0-9.]*\).*/\1/')
    clawd_ms+=($(awk -v u="$p50" 'BEGIN{printf "%d", u/1000}'))
  done
  med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
  rm_=$(med "${rg_ms[@]}") cm=$(med "${clawd_ms[@]}")
  printf '  %-44s rg %4d ms   clawd %4d ms   ratio %s\n' "$query (case_sensitive=$cs)" "$rm_" "$cm" \
    "$(awk -v a="$cm" -v b="$rm_" 'BEGIN{ if (b>0) printf "%.2fx", a/b; else print "-" }')"
done
