// A local proxy that adds clawd's bearer token to every request, for the
// official conformance suite (which sends none). Host and Origin pass as
// sent, so the DNS-rebinding checks still test clawd, not the proxy.
// Closing the client's response ends the upstream request, so the suite's
// "close the stream to cancel" reaches clawd.
//
// usage: MCP_TARGET=http://127.0.0.1:PORT/mcp MCP_TOKEN=... node authproxy.js PORTFILE
// It listens on 127.0.0.1 at a free port and writes that port to PORTFILE.
const http = require("http");
const fs = require("fs");
const t = new URL(process.env.MCP_TARGET);
const srv = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: "Bearer " + process.env.MCP_TOKEN };
  const path = t.pathname + (req.url === "/" ? "" : req.url.replace(/^\/mcp/, ""));
  const up = http.request({ host: t.hostname, port: t.port, method: req.method, path, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on("error", (e) => { res.writeHead(502); res.end(String(e)); });
  res.on("close", () => up.destroy());
  req.pipe(up);
});
srv.listen(0, "127.0.0.1", () => { fs.writeFileSync(process.argv[2], String(srv.address().port)); });
