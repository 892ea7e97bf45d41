import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { SETUP_STREAM, type EnvironmentSpec } from "../../lib/executor/environment/environment-spec";
import { listSnapshots, saveSnapshot, type SnapshotStore } from "../../lib/executor/environment/snapshot-store";
import { executeAttempt, type AttemptInput, type AttemptOutcome } from "../../lib/executor/execute-attempt";
import { verifySpecOf } from "../../lib/executor/verify-spec";
import { startNpmRegistry, type LocalNpmRegistry } from "../support/npm-registry";
import { attemptOn, makeRemote, sh, type RemoteFixture } from "./git-fixture";

/**
 * Environments, played by an attacker where a boundary is: setup installs from a real npm
 * registry on this machine (verdaccio) inside the Attempt's sandbox; the next Attempt restores
 * the snapshot instead; an untrusted Attempt keeps none; one repository's snapshot is never
 * another's; a link out of the box is neither followed nor restored; setup reaches only the
 * registries; a snapshot over the cap is refused with a sentence.
 */

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
let registry: LocalNpmRegistry;
let fx: RemoteFixture;
let store: SnapshotStore;
let stranger: Server;
let strangerPort: number;
let strangerHits = 0;

const agent: NamedAgentSpec = { name: "env-agent", command: [process.execPath, join(FIXTURES, "env-agent.mjs")], read_only_paths: [FIXTURES], price_per_minute_usd: 0 };

const env = (over: Partial<EnvironmentSpec> = {}): EnvironmentSpec => ({
  setup: "npm install --no-audit --no-fund --no-package-lock",
  cache: null,
  key: null,
  verify: null,
  onVerifyFailure: null,
  maxVerifyRounds: null,
  env: { npm_config_registry: registry.url, npm_config_update_notifier: "false" },
  toolchains: [],
  ...over,
});

async function attempt(id: string, over: Partial<AttemptInput> = {}, repo = fx): Promise<{ outcome: AttemptOutcome; out: OutputEntry[]; text: string }> {
  const out: OutputEntry[] = [];
  const outcome = await executeAttempt(
    attemptOn(repo, id, agent, {
      workspaceRoot: repo.root,
      environment: env(),
      repositoryId: "101",
      trusted: true,
      registries: [`127.0.0.1:${registry.port}`],
      snapshots: store,
      ...over,
    }),
    { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "" } },
  );
  return { outcome, out, text: out.map((e) => `[${e.stream}] ${e.text}`).join("\n") };
}

/** As root each box has a uid of its own and a restore hard-links; otherwise it copies. */
const asRoot = process.getuid?.() === 0;
const setupLines = (out: OutputEntry[]) => out.filter((e) => e.stream === SETUP_STREAM);
const failureOf = (o: AttemptOutcome) => (o.tag === "Failed" ? o.failure : null);

function project(remote: RemoteFixture, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(remote.work, path)), { recursive: true });
    writeFileSync(join(remote.work, path), text);
  }
  sh(remote.work, "add", "-A");
  sh(remote.work, "commit", "--quiet", "-m", "project");
  sh(remote.work, "push", "--quiet", remote.remote, "main");
}

const PACKAGE_JSON = JSON.stringify({ name: "widgets", version: "1.0.0", private: true, dependencies: { "@atelier-fixture/greet-lite": "1.0.0" } });

beforeAll(async () => {
  registry = await startNpmRegistry();
  fx = makeRemote();
  store = { dir: join(fx.dir, "environments"), capBytes: 1024 ** 3 };
  project(fx, { "package.json": PACKAGE_JSON, ".gitignore": "node_modules\n" });
  stranger = createServer((s) => {
    strangerHits++;
    s.end("hello\n");
  });
  await new Promise<void>((r) => stranger.listen(0, "127.0.0.1", () => r()));
  strangerPort = (stranger.address() as { port: number }).port;
}, 120_000);

afterAll(async () => {
  stranger?.close();
  await registry?.stop();
  fx?.cleanup();
});

describe("setup from the local registry, then a warm start", () => {
  let first: Awaited<ReturnType<typeof attempt>>;
  let second: Awaited<ReturnType<typeof attempt>>;

  beforeAll(async () => {
    first = await attempt("warm1/agent/1");
    second = await attempt("warm2/agent/1");
  }, 180_000);

  it("the first Attempt runs setup in the sandbox (its own group in the transcript), installs from the registry, and keeps a snapshot", () => {
    expect(first.outcome.tag, first.text).toBe("Succeeded");
    expect(setupLines(first.out).length).toBeGreaterThan(0);
    expect(first.text).toMatch(/setup: running in the sandbox; it reaches only the instance's registries/);
    expect(first.text).toMatch(/setup passed in \d+\.\d s/);
    expect(first.text).toMatch(/environment: detected npm; cache node_modules/);
    expect(first.text).toMatch(/environment: kept snapshot [0-9a-f]{12}/);
    expect(first.text).toContain("ENV-AGENT greet: HELLO, ATELIER!");
  });

  it("the second Attempt restores the snapshot: no setup group in its transcript, and the agent has the packages", () => {
    expect(second.outcome.tag, second.text).toBe("Succeeded");
    expect(setupLines(second.out)).toEqual([]);
    expect(second.text).toMatch(/environment restored from snapshot [0-9a-f]{12} \(\d+ files, [\d.]+ MB, (?:hard links|copies)\) in [\d.]+ s; setup skipped/);
    expect(second.text).toContain("ENV-AGENT greet: HELLO, ATELIER!");
  });

  it("the snapshot counts its hit", async () => {
    const snaps = await listSnapshots(store, "101");
    expect(snaps).toHaveLength(1);
    expect(snaps[0]!.hits).toBe(1);
    expect(snaps[0]!.cache).toEqual(["node_modules"]);
  });

  it("an agent that writes through a restored file changes neither the snapshot nor the next Attempt", async () => {
    const tamper = await attempt("tamper/agent/1", { prompt: "tamper with node_modules" });
    expect(tamper.outcome.tag, tamper.text).toBe("Succeeded");
    // a hard-linked file is the worker's and read-only; a copy (a box with a disk quota is its
    // own filesystem, so it gets copies) is the Attempt's own
    const linked = /MB, hard links\)/.test(tamper.text);
    expect(tamper.text).toMatch(asRoot && linked ? /ENV-AGENT tamper write: (EACCES|EPERM|EROFS)/ : /ENV-AGENT tamper write: (done|EACCES)/);
    const next = await attempt("after-tamper/agent/1");
    expect(next.text).toContain("ENV-AGENT greet: HELLO, ATELIER!");
  }, 120_000);
});


describe("verify starts from the environment the agent had", () => {
  it("a verify that needs the installed packages passes in its fresh checkout, the snapshot restored there too", async () => {
    const spec = env({ verify: `node -e "require('@atelier-fixture/greet-lite')"` });
    const run = await attempt("verify-env/agent/1", { environment: spec, verify: verifySpecOf(spec) });
    expect(run.outcome.tag, run.text).toBe("Succeeded");
    const verify = run.outcome.tag === "Succeeded" ? run.outcome.verify : null;
    expect(verify?.passed, run.text).toBe(true);
    // twice: once into the agent's box, once into verify's
    expect(run.text.match(/environment restored from snapshot/g)?.length, run.text).toBe(2);
  }, 180_000);
});
describe("who may write a snapshot, and whose is restored", () => {
  it("an untrusted Attempt runs setup but keeps no snapshot, and the next one runs setup again", async () => {
    const untrusted = await attempt("untrusted/agent/1", { repositoryId: "202", trusted: false });
    expect(untrusted.outcome.tag, untrusted.text).toBe("Succeeded");
    expect(untrusted.text).toMatch(/does not keep a snapshot \(only an Attempt of the default branch whose trigger was trusted writes one\)/);
    expect(await listSnapshots(store, "202")).toEqual([]);
    const again = await attempt("untrusted2/agent/1", { repositoryId: "202", trusted: false });
    expect(setupLines(again.out).length).toBeGreaterThan(0);
  }, 120_000);

  it("an Attempt continuing a branch keeps no snapshot, even when its trigger was trusted", async () => {
    sh(fx.work, "push", "--quiet", fx.remote, "main:atelier/start-dev/branchy");
    const onBranch = await attempt("branchy/agent/1", { repositoryId: "303", trusted: true });
    expect(onBranch.text).toMatch(/continuing from atelier\/start-dev\/branchy/);
    expect(await listSnapshots(store, "303")).toEqual([]);
  }, 120_000);

  it("repository A's snapshot is never restored for B, whatever B's name", async () => {
    // B has A's name and content: only the GitHub id tells them apart, and it keys the snapshot
    const b = await attempt("repo-b/agent/1", { repositoryId: "404" });
    expect(b.text).not.toMatch(/environment restored/);
    expect(setupLines(b.out).length).toBeGreaterThan(0);
  }, 120_000);
});

describe("the sandbox of setup", () => {
  it("setup reaching a host not on the registry allowlist fails, and the host hears nothing", async () => {
    const reach = `node -e "require('net').connect(${strangerPort}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', (e) => { console.error('blocked: ' + e.code); process.exit(3) })"`;
    const direct = await attempt("egress1/agent/1", { repositoryId: "505", environment: env({ setup: reach }) });
    expect(failureOf(direct.outcome)).toMatchObject({ kind: "AgentFailure", category: "configuration" });
    expect(failureOf(direct.outcome)!.message).toMatch(/^setup_failed: the environment's setup exited with code 3; its last lines:\nblocked: ECONNREFUSED/);
    expect(strangerHits).toBe(0);

    const proxied = `node -e "const r = require('http').request({ host: '127.0.0.1', port: 3128, method: 'CONNECT', path: 'evil.example.com:443' }); r.on('connect', (res) => { console.error('status ' + res.statusCode); process.exit(res.statusCode === 200 ? 0 : 4) }); r.on('error', (e) => { console.error(e.code); process.exit(5) }); r.end()"`;
    const viaProxy = await attempt("egress2/agent/1", { repositoryId: "505", registries: [`127.0.0.1:${registry.port}`, "registry.npmjs.org"], environment: env({ setup: proxied }) });
    expect(failureOf(viaProxy.outcome)!.message).toMatch(/exited with code 4; its last lines:\n(.*\n)*status 403/);
    expect(viaProxy.text).toMatch(/egress refused: evil\.example\.com:443 \(not in the agent's egress allowlist; setup reaches only the instance's registries\)/);
  }, 120_000);

  it("a registry that does not answer is an infrastructure failure, retried", async () => {
    const down = await attempt("outage/agent/1", { repositoryId: "606", registries: [`127.0.0.1:${strangerPort + 1}`], environment: env({ env: { npm_config_registry: `http://127.0.0.1:${strangerPort + 1}/`, npm_config_fetch_retries: "0" } }) });
    expect(failureOf(down.outcome), down.text).toMatchObject({ kind: "InfraFailure", category: "transport", retryable: true });
    expect(failureOf(down.outcome)!.message).toMatch(/could not reach the package registry 127\.0\.0\.1:\d+/);
  }, 120_000);
});

describe("links and the cap", () => {
  it("a link in a cache path pointing out of the box is neither followed on save nor restored", async () => {
    const outside = mkdtempSync(join(tmpdir(), "atelier-outside-"));
    writeFileSync(join(outside, "secret.txt"), "worker secret\n");
    const setup = `mkdir -p node_modules/pkg && echo ok > node_modules/pkg/index.js && ln -s ${outside} node_modules/out && ln -s ${join(outside, "secret.txt")} node_modules/pkg/secret.txt && ln -s ../pkg/index.js node_modules/pkg/self.js`;
    const first = await attempt("links1/agent/1", { repositoryId: "707", environment: env({ setup, cache: ["node_modules"], key: ["package.json"] }) });
    expect(first.outcome.tag, first.text).toBe("Succeeded");
    expect(first.text).toMatch(/2 symbolic link\(s\) pointing out of the box were not kept/);
    const [snap] = await listSnapshots(store, "707");
    const kept = join(snap!.dir, "paths", "0");
    expect(readdirSync(kept).sort()).toEqual(["pkg"]);
    expect(existsSync(join(kept, "pkg", "secret.txt"))).toBe(false);
    expect(lstatSync(join(kept, "pkg", "self.js")).isSymbolicLink()).toBe(true);
    rmSync(outside, { recursive: true, force: true });
  }, 120_000);

  it("a snapshot whose place in the checkout is a link is not restored through it", async () => {
    // the repository commits node_modules as a link out of the box: the restore must not write there
    const target = mkdtempSync(join(tmpdir(), "atelier-target-"));
    const clean = makeRemote();
    const linked = makeRemote();
    try {
      project(clean, { "package.json": PACKAGE_JSON });
      symlinkSync(target, join(linked.work, "node_modules"));
      project(linked, { "package.json": PACKAGE_JSON });
      const environment = env({ setup: "mkdir -p node_modules/pkg && echo ok > node_modules/pkg/index.js", cache: ["node_modules"], key: ["package.json"] });
      // a snapshot of the same key, saved from a clean checkout of the same repository
      const saved = await attempt("links2/agent/1", { repositoryId: "111", environment }, clean);
      expect(saved.text).toMatch(/kept snapshot/);
      const restore = await attempt("links3/agent/1", { repositoryId: "111", environment }, linked);
      expect(restore.outcome.tag, restore.text).toBe("Succeeded");
      expect(restore.text).toMatch(/environment: node_modules \(node_modules is a symbolic link: not followed\) was not restored/);
      expect(readdirSync(target)).toEqual([]);
    } finally {
      clean.cleanup();
      linked.cleanup();
      rmSync(target, { recursive: true, force: true });
    }
  }, 120_000);

  it("a snapshot over the cap is refused with a sentence, and nothing of it is kept", async () => {
    const box = mkdtempSync(join(tmpdir(), "atelier-cap-"));
    mkdirSync(join(box, "node_modules"));
    writeFileSync(join(box, "node_modules", "big.bin"), Buffer.alloc(64 * 1024));
    const tiny: SnapshotStore = { dir: join(box, "store"), capBytes: 16 * 1024 };
    const saved = await saveSnapshot(tiny, "808", "a".repeat(64), ["node_modules"], { worktree: box, home: join(box, "home") });
    expect(saved).toEqual({
      tag: "Refused",
      sentence:
        "The environment's cache paths hold more than 0.000 GB, the instance's cap on snapshots (ATELIER_ENV_CACHE_GB): no snapshot is kept, and setup runs on every Attempt; cache less, or ask the instance's admin to raise the cap.",
    });
    expect(readdirSync(join(tiny.dir, "808"))).toEqual([]);
    rmSync(box, { recursive: true, force: true });
  });
});

describe("a snapshot folder on another filesystem", () => {
  it.runIf(existsSync("/dev/shm"))("is restored by copies (a hard link cannot cross filesystems), and setup is skipped", async () => {
    const elsewhere: SnapshotStore = { dir: mkdtempSync("/dev/shm/atelier-env-"), capBytes: 1024 ** 3 };
    try {
      const first = await attempt("shm1/agent/1", { repositoryId: "1101", snapshots: elsewhere });
      expect(first.text).toMatch(/kept snapshot/);
      const second = await attempt("shm2/agent/1", { repositoryId: "1101", snapshots: elsewhere });
      expect(second.text).toMatch(/environment restored from snapshot [0-9a-f]{12} \(\d+ files, [\d.]+ MB, copies\)/);
      expect(second.text).toContain("ENV-AGENT greet: HELLO, ATELIER!");
    } finally {
      rmSync(elsewhere.dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("the harvest", () => {
  it("never commits a cache path the agent left, even when the repository does not ignore it", async () => {
    const plain = makeRemote();
    try {
      project(plain, { "package.json": PACKAGE_JSON });
      const run = await attempt("harvest/agent/1", { repositoryId: "1001" }, plain);
      expect(run.outcome.tag, run.text).toBe("Succeeded");
      expect(run.text).toContain("ENV-AGENT greet: HELLO, ATELIER!");
      expect(run.outcome.tag === "Succeeded" && run.outcome.harvest.pushed).toBe(false);
      expect(run.text).toContain("the agent made no commits; nothing to push");
    } finally {
      plain.cleanup();
    }
  }, 120_000);
});

describe("setup that fails", () => {
  it("is setup_failed (configuration) with its last lines, and the agent never runs", async () => {
    const broken = await attempt("broken/agent/1", { repositoryId: "909", environment: env({ setup: "echo preparing\necho 'npm ERR! missing script: build' >&2\nexit 7" }) });
    expect(failureOf(broken.outcome)).toMatchObject({ kind: "AgentFailure", category: "configuration", retryable: false });
    expect(failureOf(broken.outcome)!.message).toBe("setup_failed: the environment's setup exited with code 7; its last lines:\npreparing\nnpm ERR! missing script: build");
    expect(broken.text).not.toContain("ENV-AGENT");
  }, 60_000);
});
