#!/usr/bin/env bash
# bench/search.sh: time clawd's search tool against ripgrep on a copy of the
# Go source tree ($(go env GOROOT)/src, ~11,500 files, ~150 MB on disk).
#
# Both run on the same tree in the same run, alternating per round (rg, then
# clawd) after an untimed warm-up, so both see a warm page cache and the same
# machine load; the program prints medians and the ratio clawd/rg per query.
# clawd is measured in-process (bench/cmd/searchbench calls tools.NewSearch
# directly, so JSON-RPC and stdio are not included); rg as a process. See
# docs/search.md for the rg flags that make the two do the same work.
#
# Environment:
#   ROUNDS=N         timed rounds per query (default 7)
#   BENCH_TREE=DIR   where the copy lives (default ${TMPDIR:-/tmp}/clawd-search-bench/src);
#                    it is made once and reused
#   ONLY=TEXT        run only the queries whose name contains TEXT
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
