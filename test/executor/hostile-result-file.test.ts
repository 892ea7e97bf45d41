import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt } from "../../lib/executor/execute-attempt";
import { attemptOn, makeRemote, type RemoteFixture } from "./git-fixture";

/**
 * The result file, played by the attacker from inside its sandbox: the agent replaces it with a
 * link to /proc/kmsg (read through, a "regular" file that never ends held a worker thread for
 * good) or to a secret file of the worker's host (read through, a parse error quoted it into the
 * transcript). The worker reads neither, waits for neither, and the Attempt ends as usual.
 */

let fx: RemoteFixture;
beforeEach(() => {
  fx = makeRemote();
});
afterEach(() => fx.cleanup());

const SECRET = "WORKER_ONLY_SECRET=hostile-result-0123456789";

async function linkedTo(target: string) {
  const agent: NamedAgentSpec = { name: "linker", command: ["sh", "-c", `ln -sf '${target}' "$ATELIER_RESULT_FILE"`], price_per_minute_usd: 0.01 };
  const out: OutputEntry[] = [];
  const outcome = await executeAttempt(attemptOn(fx, `r${target.length}/agent/1`, agent), { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "" } });
  return { outcome, text: out.map((e) => e.text).join("\n") };
}

describe("a result file the agent linked elsewhere", () => {
  it("to /proc/kmsg: not read, not waited on", async () => {
    const { outcome, text } = await linkedTo("/proc/kmsg");
    expect(outcome.tag).toBe("Succeeded");
    expect(text).toContain("result file ignored: it is a symbolic link");
  });

  it("to a secret file of the host: not read, nothing of it in the transcript", async () => {
    const secretFile = join(fx.dir, ".env");
    writeFileSync(secretFile, `${SECRET}\n`);
    const { outcome, text } = await linkedTo(secretFile);
    expect(outcome.tag).toBe("Succeeded");
    expect(text).toContain("result file ignored: it is a symbolic link");
    expect(text).not.toContain("hostile-result");
  });
});
