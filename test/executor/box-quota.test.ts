import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt } from "../../lib/executor/execute-attempt";
import { attemptOn, makeRemote, remoteSha, type RemoteFixture } from "./git-fixture";

/**
 * A disk-filling agent, played by the attacker: it writes zeros to its clone and its $TMPDIR
 * until something stops it. Its box is a tmpfs of its roster's limits.disk_mb, so it gets ENOSPC
 * there; the disk the worker (this test process) and Postgres live on never sees its writes, and
 * the Attempt ends as any other, its box unmounted and removed. Before, it wrote on until that
 * disk was full.
 */

let fx: RemoteFixture;
beforeEach(() => {
  fx = makeRemote();
});
afterEach(() => fx.cleanup());

const FILL = [
  'dd if=/dev/zero of=/tmp/fill bs=1M count=1024 2>&1 | head -n 1; echo "tmp: $(du -sm /tmp | cut -f1) MB"',
  'dd if=/dev/zero of=/workspace/fill.bin bs=1M count=1024 2>&1 | head -n 1; rm -f /workspace/fill.bin /tmp/fill',
  "echo done > /workspace/after.txt",
].join("; ");

const filler: NamedAgentSpec = { name: "filler", command: ["sh", "-c", FILL], price_per_minute_usd: 0.01, limits: { diskMb: 64 } };

describe.skipIf(process.getuid?.() !== 0)("a box's disk quota", () => {
  it("stops a disk-filling agent at its limits.disk_mb with ENOSPC (64 MB written of the 2 GB it asked for), and the box is unmounted after", async () => {
    const out: OutputEntry[] = [];
    const outcome = await executeAttempt(attemptOn(fx, "r3/agent/1", filler), { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "" } });
    const text = out.map((e) => e.text).join("\n");
    expect(text).toMatch(/No space left on device/);
    // what it managed to write: its quota, not the gigabyte it asked for
    expect(text).toMatch(/tmp: 6\d MB/);
    expect(outcome.tag).toBe("Succeeded");
    // the agent went on after its ENOSPC, and its work was harvested
    expect(remoteSha(fx.remote, "atelier/start-dev/r3")).not.toBeNull();
    expect(readdirSync(join(fx.root, "attempts"))).toEqual([]);
    expect(readFileSync("/proc/self/mounts", "utf8")).not.toContain(fx.root);
  });
});
