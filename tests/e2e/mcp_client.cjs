// An MCP client written with the official TypeScript SDK (@modelcontextprotocol/sdk),
// driving `agentrun mcp` over stdio for test_mcp.py. One JSON line per step on stdout:
//   node mcp_client.cjs AGENTRUN CWD SCENARIO [MOCK_URL GONE_FILE]
// scenario "tools": initialize, list the tools, call extract, call run (gemini);
// scenario "cancel": call a run that hangs, abort it once the mock saw its request,
// print {"step":"aborted"}, wait for GONE_FILE (the test writes it when no CLI is left),
// then ping and close.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const fs = require("fs");

const [agentrun, cwd, scenario, mockUrl, goneFile] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const transport = new StdioClientTransport({
    command: agentrun,
    args: ["mcp", "--providers", "gemini", "-p", "gemini", "--timeout", "90s"],
    cwd,
    env: process.env,
    stderr: "inherit",
  });
  const client = new Client({ name: "agentrun-e2e", version: "1.0.0" });
  await client.connect(transport);
  say({ step: "connected", version: transport._process ? client.getServerVersion() : null,
        protocol: client.transport && client.transport.protocolVersion });
  if (scenario === "tools") {
    const { tools } = await client.listTools();
    say({ step: "tools", names: tools.map((t) => t.name),
          output: tools.every((t) => t.outputSchema && t.outputSchema.type === "object") });
    const ex = await client.callTool({ name: "extract",
                                       arguments: { text: 'Sure:\n```json\n{"n": 1.50}\n```' } });
    say({ step: "extract", result: ex });
    const progress = [];
    const run = await client.callTool(
      { name: "run", arguments: { prompt: "What is the answer? JSON please.", json: true } },
      undefined, { onprogress: (p) => progress.push(p), timeout: 120000 });
    say({ step: "run", result: run, progress });
  } else if (scenario === "cancel") {
    const ac = new AbortController();
    const call = client.callTool({ name: "run", arguments: { prompt: "hang please" } },
                                 undefined, { signal: ac.signal, timeout: 120000 })
      .then((r) => ({ answered: r }), (e) => ({ rejected: String(e && e.message) }));
    for (let i = 0; i < 600; i++) {
      const r = await fetch(mockUrl + "/_mock/requests");
      const reqs = await r.json();
      if (reqs.some((q) => q.api === "gemini" && !q.side)) break;
      await sleep(100);
    }
    ac.abort("the test cancels");
    const outcome = await call;
    say({ step: "aborted", outcome });
    for (let i = 0; i < 300 && !fs.existsSync(goneFile); i++) await sleep(100);
    await client.ping();
    say({ step: "pinged" });
  }
  await client.close();
  say({ step: "closed" });
}

main().catch((e) => {
  say({ step: "error", error: String(e && e.stack) });
  process.exit(1);
});
