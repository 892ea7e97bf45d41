// A process that runs the web's Proxy (proxy.ts) as the web process does, and is sent SIGTERM:
// it prints what the Proxy answered before and after, one JSON line (web-draining.test.ts).
import { NextRequest } from "next/server";
import { proxy } from "../../../proxy";
import { isDraining } from "../../../lib/http/draining";

async function ask(path: string) {
  const res = await proxy(new NextRequest(`http://127.0.0.1:3000${path}`));
  const body = res.status === 503 ? ((await res.json()) as unknown) : null;
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
}

const before = { draining: isDraining(), api: await ask("/api/v1/me") };
process.kill(process.pid, "SIGTERM");
await new Promise((resolve) => setTimeout(resolve, 50));
const after = { draining: isDraining(), api: await ask("/api/v1/runs"), page: await ask("/runs"), readyz: await ask("/readyz"), healthz: await ask("/healthz") };
process.stdout.write(`${JSON.stringify({ before, after })}\n`);
