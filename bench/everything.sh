# Sourced by the benchmark scripts that call server-everything: sets
# $everything to its dist/index.js, installing the version the tests pin
# (test/clawdtest/npm.go) into the test cache first if it is not there.
# Needs $here, the checkout's root.
npm_dir=${CLAWD_TEST_NPM:-$HOME/.cache/clawd-test-npm}
spec=$(sed -n 's/^const NPMUpstreams = "\(.*\)"$/\1/p' "$here/test/clawdtest/npm.go" | tr ' ' '\n' | grep server-everything)
everything=$npm_dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js
if ! grep -qF "\"version\": \"${spec##*@}\"" "$npm_dir/node_modules/@modelcontextprotocol/server-everything/package.json" 2>/dev/null; then
  mkdir -p "$npm_dir"
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "$spec" >&2
fi
