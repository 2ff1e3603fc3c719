// Drives `toolbelt mcp` with the official TypeScript SDK client.
// Usage: node ts_client.mjs stdio TOOLBELT | node ts_client.mjs http URL [SLOW_COMMAND]
// SLOW_COMMAND, when given, is run with Bash last (its answer in `slow`).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [kind, target, slow] = process.argv.slice(2);
const transport = kind === "stdio"
  ? new StdioClientTransport({ command: target, args: ["mcp"], stderr: "ignore" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "ts-test", version: "1.0.0" });
await client.connect(transport);
const seen = { server: client.getServerVersion()?.name, protocol: transport.protocolVersion ?? null };
const { tools } = await client.listTools();
seen.tools = tools.map((t) => t.name).sort();
seen.readOnly = tools.find((t) => t.name === "Read")?.annotations?.readOnlyHint;
const read = await client.callTool({ name: "Read", arguments: { file_path: "hello.txt" } });
seen.read = [read.isError, read.content[0].text];
const echo = await client.callTool({ name: "Bash", arguments: { command: "echo from ts" } });
seen.bash = [echo.isError, echo.structuredContent?.stdout];
const missing = await client.callTool({ name: "Read", arguments: { file_path: "missing.txt" } });
seen.missing = [missing.isError, missing.content[0].text];
if (slow) {
  const r = await client.callTool({ name: "Bash", arguments: { command: slow } });
  seen.slow = [r.isError, r.structuredContent?.stdout ?? r.content[0].text];
}
await client.close();
console.log(JSON.stringify(seen));
