// Drives clawd with the official TypeScript SDK v2 client (@modelcontextprotocol/client) for
// test/clients TestTypeScriptSDKv2. Input is one JSON object in TSV2_ARGS:
//   pkg      the package's directory (node_modules/@modelcontextprotocol/client)
//   mode     "legacy" (the SDK's default: initialize), "auto" (probe server/discover, fall back
//            on a non-modern answer) or a version to pin ("2026-07-28": modern or fail)
//   command, args, cwd, env   a stdio server to spawn (clawd serve, clawd connect), or
//   url, token                a Streamable HTTP endpoint and its bearer token
// It connects, lists tools, calls read_file on a.txt and prints one JSON line: the negotiated
// version and era, the tool names, the file's content and the HTTP session id (null if none).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const a = JSON.parse(process.env.TSV2_ARGS);
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(join(a.pkg, "dist", "index.mjs")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(a.pkg, "dist", "stdio.mjs")).href);

const negotiation = a.mode === "legacy" ? undefined : { mode: a.mode === "auto" ? "auto" : { pin: a.mode } };
const client = new Client({ name: "ts-sdk-v2", version: "1" }, negotiation ? { versionNegotiation: negotiation } : {});
const transport = a.url
  ? new StreamableHTTPClientTransport(new URL(a.url), { requestInit: { headers: { Authorization: "Bearer " + a.token } } })
  : new StdioClientTransport({ command: a.command, args: a.args, cwd: a.cwd, env: a.env, stderr: "ignore" });
await client.connect(transport);
const tools = await client.listTools();
const read = await client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
const out = {
  version: client.getNegotiatedProtocolVersion(),
  era: client.getProtocolEra(),
  tools: tools.tools.map((t) => t.name),
  read: read.isError ? null : (read.structuredContent?.content ?? null),
  sessionId: transport.sessionId ?? null,
};
await client.close();
console.log(JSON.stringify(out));
