import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { NO_ENVIRONMENT, SETUP_STREAM, type EnvironmentSpec } from "../../lib/executor/environment/environment-spec";
import { toolchainIdentity, type SnapshotStore } from "../../lib/executor/environment/snapshot-store";
import { mountToolchains, type Toolchain } from "../../lib/executor/environment/toolchains";
import { executeAttempt, type AttemptInput, type AttemptOutcome } from "../../lib/executor/execute-attempt";
import { verifySpecOf } from "../../lib/executor/verify-spec";
import { startNpmRegistry, type LocalNpmRegistry } from "../support/npm-registry";
import { attemptOn, makeRemote, type RemoteFixture } from "./git-fixture";

/**
 * Toolchains in the sandbox: a folder of the roster, picked by the repository, is mounted
 * read-only for setup, the agent and verify with its bin first on PATH, and is part of the
 * snapshot's key. Played by an attacker: the agent cannot write to it (even a folder its uid
 * could write on the host), and a toolchain that leads out of its root, or holds the worker's
 * own folders, is refused when the Attempt mounts it. Setup can also install a user-space tool
 * from the instance's registries into a cache path, and the next Attempt restores it.
 */

let fx: RemoteFixture;
let store: SnapshotStore;
let registry: LocalNpmRegistry;
let root: string;

/** A toolchain folder whose bin/node-x prints `version`. */
function makeToolchain(name: string, version: string): Toolchain {
  const path = join(root, name);
  mkdirSync(join(path, "bin"), { recursive: true });
  writeFileSync(join(path, "bin", "node-x"), `#!/bin/sh\necho "node-x ${version}"\n`);
  // writable by anyone on the host: only the sandbox's read-only mount keeps the agent out
  chmodSync(join(path, "bin", "node-x"), 0o777);
  chmodSync(join(path, "bin"), 0o777);
  chmodSync(path, 0o755);
  return { name, path, root };
}

const AGENT_SCRIPT = `
echo "TC-AGENT sees: $(node-x) at $(command -v node-x)"
bin=$(dirname "$(command -v node-x)")
echo "TC-AGENT write: $( (echo 'echo poisoned' > "$bin/node-x") 2>&1 || true)"
echo "TC-AGENT plant: $( (touch "$bin/planted") 2>&1 || true)"
echo "TC-AGENT remove: $( (rm -f "$bin/node-x") 2>&1 || true)"
`;
const agent: NamedAgentSpec = { name: "tc-agent", command: ["sh", "-c", AGENT_SCRIPT], price_per_minute_usd: 0 };

const environment = (over: Partial<EnvironmentSpec> = {}): EnvironmentSpec => ({
  ...NO_ENVIRONMENT,
  setup: 'echo "SETUP sees: $(node-x)"; mkdir -p tc-cache; node-x > tc-cache/version',
  cache: ["tc-cache"],
  key: [],
  verify: 'echo "VERIFY sees: $(node-x)"; test "$(cat tc-cache/version)" = "$(node-x)"',
  ...over,
});

async function attempt(id: string, toolchains: Toolchain[], over: Partial<AttemptInput> = {}): Promise<{ outcome: AttemptOutcome; out: OutputEntry[]; text: string }> {
  const out: OutputEntry[] = [];
  const env = over.environment ?? environment({ toolchains: toolchains.map((t) => t.name) });
  const outcome = await executeAttempt(
    attemptOn(fx, id, agent, {
      workspaceRoot: fx.root,
      environment: env,
      verify: verifySpecOf(env),
      repositoryId: "202",
      trusted: true,
      registries: [`127.0.0.1:${registry.port}`],
      verifyEgress: [`127.0.0.1:${registry.port}`],
      snapshots: store,
      toolchains,
      ...over,
    }),
    { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "" } },
  );
  return { outcome, out, text: out.map((e) => `[${e.stream}] ${e.text}`).join("\n") };
}

const keptKey = (text: string) => /environment: kept snapshot ([0-9a-f]{12})/.exec(text)?.[1] ?? null;

let nodeX: Toolchain;
let nodeY: Toolchain;

beforeAll(async () => {
  registry = await startNpmRegistry();
  fx = makeRemote();
  root = join(fx.dir, "toolchains");
  mkdirSync(root);
  chmodSync(fx.dir, 0o755);
  store = { dir: join(fx.dir, "environments"), capBytes: 1024 ** 3 };
  nodeX = makeToolchain("node-x", "v99.1.0");
  nodeY = makeToolchain("node-y", "v77.0.0");
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  fx?.cleanup();
});

describe("a repository's toolchain in setup, the agent and verify", () => {
  let first: Awaited<ReturnType<typeof attempt>>;
  let other: Awaited<ReturnType<typeof attempt>>;

  beforeAll(async () => {
    first = await attempt("tc1/agent/1", [nodeX]);
    other = await attempt("tc2/agent/1", [nodeY]);
  }, 180_000);

  it("setup, the agent and verify run the toolchain's program from its bin, and the transcript says which toolchain", () => {
    expect(first.outcome.tag, first.text).toBe("Succeeded");
    expect(first.text).toContain(`toolchains: node-x (${nodeX.path}), read-only, bin first on PATH for setup, the agent and verify`);
    expect(first.out.filter((e) => e.stream === SETUP_STREAM).map((e) => e.text).join("\n")).toContain("SETUP sees: node-x v99.1.0");
    expect(first.text).toContain(`TC-AGENT sees: node-x v99.1.0 at ${nodeX.path}/bin/node-x`);
    expect(first.text).toContain("VERIFY sees: node-x v99.1.0");
    expect(first.outcome.tag === "Succeeded" && first.outcome.verify).toMatchObject({ passed: true });
  });

  it("attack: the agent cannot change the toolchain, even a folder its uid could write on the host", () => {
    expect(first.text).toMatch(/TC-AGENT write: .*Read-only file system/);
    expect(first.text).toMatch(/TC-AGENT plant: .*Read-only file system/);
    expect(first.text).toMatch(/TC-AGENT remove: .*Read-only file system/);
    expect(readFileSync(join(nodeX.path, "bin", "node-x"), "utf8")).toContain("v99.1.0");
    // and the next Attempt's toolchain is the same
    expect(other.text).not.toContain("poisoned");
  });

  it("the snapshot's key changes with the toolchain: another one runs setup and keeps a snapshot of its own", () => {
    expect(other.outcome.tag, other.text).toBe("Succeeded");
    // before the agent: setup, no snapshot of the other toolchain (verify restores this Attempt's own)
    expect(other.text.split("running agent")[0]).not.toMatch(/environment restored from snapshot/);
    expect(other.text).toContain("SETUP sees: node-x v77.0.0");
    expect(other.text).toContain("VERIFY sees: node-x v77.0.0");
    expect(keptKey(first.text)).not.toBeNull();
    expect(keptKey(other.text)).not.toBeNull();
    expect(keptKey(other.text)).not.toBe(keptKey(first.text));
  });

  it("the same toolchain again restores its snapshot; one replaced in place is another key", async () => {
    const again = await attempt("tc3/agent/1", [nodeX]);
    expect(again.text).toContain(`environment restored from snapshot ${keptKey(first.text)}`);
    expect(again.text).toContain("VERIFY sees: node-x v99.1.0");
    const before = toolchainIdentity([], mountToolchains([nodeX], []));
    writeFileSync(join(nodeX.path, "bin", "node-x"), `#!/bin/sh\necho "node-x v99.2.0 (upgraded)"\n`);
    expect(toolchainIdentity([], mountToolchains([nodeX], []))).not.toBe(before);
    expect(toolchainIdentity([], [])).not.toBe(before);
  }, 120_000);
});

describe("attack: a toolchain is checked again when an Attempt mounts it", () => {
  it("a toolchain turned into a link out of its root after the config was loaded is refused, and nothing runs", async () => {
    symlinkSync("/etc", join(root, "swapped"));
    const { outcome, text } = await attempt("tcswap/agent/1", [{ name: "swapped", path: join(root, "swapped"), root }]);
    expect(outcome.tag).toBe("Failed");
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "AgentFailure", category: "configuration" });
    expect(text).toMatch(/toolchain_unavailable: the toolchain swapped \(.*\) cannot be mounted: it leads to \/etc, outside its toolchain root/);
    expect(text).not.toContain("TC-AGENT");
  });

  it("a toolchain that holds the worker's workspace is refused", async () => {
    const holder = makeToolchain("holder", "v1");
    const { outcome, text } = await attempt("tchold/agent/1", [holder], { workspaceRoot: join(holder.path, "workspaces") });
    expect(outcome.tag).toBe("Failed");
    expect(text).toMatch(/toolchain_unavailable: the toolchain holder .* it holds .*\/holder\/workspaces, which is the worker's own/);
  });
});

describe("a user-space toolchain installed by setup from the instance's registries", () => {
  it("setup installs a tool into a cache path in the home, verify runs it, and the next Attempt restores it without setup", async () => {
    const userSpace = environment({
      setup: `npm install --prefix ~/tools --no-audit --no-fund --no-package-lock @atelier-fixture/shout-lite@1.0.0`,
      cache: ["~/tools"],
      key: [],
      verify: "~/tools/node_modules/.bin/shout verified in user space",
      env: { npm_config_registry: registry.url, npm_config_update_notifier: "false" },
    });
    const first = await attempt("tcuser1/agent/1", [], { environment: userSpace, verify: verifySpecOf(userSpace) });
    expect(first.outcome.tag, first.text).toBe("Succeeded");
    expect(first.text).toMatch(/added \d+ package/);
    expect(first.text).toContain("VERIFIED IN USER SPACE");
    expect(keptKey(first.text)).not.toBeNull();
    const second = await attempt("tcuser2/agent/1", [], { environment: userSpace, verify: verifySpecOf(userSpace) });
    expect(second.out.filter((e) => e.stream === SETUP_STREAM)).toEqual([]);
    expect(second.text).toContain(`environment restored from snapshot ${keptKey(first.text)}`);
    expect(second.text).toContain("VERIFIED IN USER SPACE");
  }, 180_000);
});
