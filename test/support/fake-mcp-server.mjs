#!/usr/bin/env node
// A minimal MCP server over stdio for the real CLIs' tests: it lists one tool, `ping`, and on
// the first call to it exits without an answer (a transport failure mid-run). Started by the
// roster's mcp_config as `node fake-mcp-server.mjs`.
import { createInterface } from "node:readline";

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
const tool = { name: "ping", description: "Answers pong.", inputSchema: { type: "object", properties: {} } };

createInterface({ input: process.stdin }).on("line", (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  if (request.id === undefined) return; // a notification
  switch (request.method) {
    case "initialize":
      send({ id: request.id, result: { protocolVersion: request.params?.protocolVersion ?? "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "probe", version: "1.0.0" } } });
      break;
    case "tools/list":
      send({ id: request.id, result: { tools: [tool] } });
      break;
    case "tools/call":
      process.exit(1);
      break;
    default:
      send({ id: request.id, error: { code: -32601, message: "method not found" } });
  }
});
