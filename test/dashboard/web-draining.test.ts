import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * The web process told to stop (SIGTERM): Next.js stops accepting connections and finishes the
 * open ones; a request that still reaches the process is answered 503 `server_draining` with
 * Retry-After by the Proxy, so its client sends it again to the next process. /healthz still
 * says the process lives. The Proxy runs in a process of its own, sent a real SIGTERM.
 */

const CHILD = fileURLToPath(new URL("./support/draining-child.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("the web process while it drains", () => {
  it("answers 503 server_draining with Retry-After after SIGTERM, and only then", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", CHILD], { cwd: ROOT, timeout: 60_000 });
    const { before, after } = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, Record<string, { status: number; retryAfter: string | null; body: unknown } | boolean>>;
    expect(before).toMatchObject({ draining: false, api: { status: 200 } });
    expect(after!.draining).toBe(true);
    for (const answer of [after!.api, after!.page, after!.readyz]) {
      expect(answer).toMatchObject({ status: 503, retryAfter: "5", body: { error: "server_draining" } });
    }
    expect(after!.healthz).toMatchObject({ status: 200 });
  }, 90_000);
});
