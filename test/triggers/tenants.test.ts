import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseInstanceConfig } from "../../lib/config/roster";
import type { LoopDefinition } from "../../lib/loops/config-schema";
import { fireSchedule, tickEvent } from "../../lib/triggers/fire-schedule";
import { listLoops } from "../../lib/triggers/loop-status";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { storeRepositoryConfig } from "../../lib/triggers/repository-config";
import { installRepository, runsOf, startFixture, START_DEV_CONFIG, type Fixture } from "../github/support/fixture";
import { mayUseAgent } from "../../lib/auth/roster-allow";
import { gitHubHost } from "../../lib/github/github-user-api";
import { reconcileInstallations } from "../../lib/github/installation-sync";
import { storedConfig } from "../../lib/store/items/repository-configs";

/**
 * THREATS.md attacks 9 and 13, played by installation B against installation A: a schedule Loop
 * of B that names A's repository, and an agent the roster keeps for A. Each refusal says why:
 * a config error on the Loop with its line, and nothing opened on A. And attack 23 on `allow:`:
 * whoever takes the name of a repository or account it lists gets nothing of the agent.
 */

const roster = parseInstanceConfig(
  `
agents:
  demo: { command: [atelier-demo-agent] }
  fenced: { command: [atelier-demo-agent], allow: [tenant-a] }
  pinned: { command: [atelier-demo-agent], allow: [tenant-c/api, tenant-d] }
`,
  "tenants-roster.yml",
);

const B_CONFIG = `loops:
  sneaky:
    on: { schedule: { cron: "0 6 * * *" } }
    repositories: [tenant-a/app, tenant-b/tools]
    agent: demo
    prompt: Read \${{ repository.full_name }}
  borrowed:
    on: issues
    agent: fenced
    prompt: Use A's agent on \${{ item.title }}
  own:
    on: { schedule: { cron: "0 6 * * *" } }
    repositories: [tenant-b/tools]
    agent: demo
    prompt: Tidy \${{ repository.full_name }}
`;

let fx: Fixture;
let a: { fullName: string; installationId: number };
let b: { fullName: string; installationId: number };
beforeAll(async () => {
  fx = await startFixture({ deps: { roster } });
  a = await installRepository(fx, { owner: "tenant-a", name: "app", config: START_DEV_CONFIG.replace("agent: demo", "agent: fenced") });
  await installRepository(fx, { owner: "tenant-b", name: "tools", config: null });
  b = await installRepository(fx, { owner: "tenant-b", name: "ops", config: B_CONFIG });
  await pollRepository(fx.deps, a.fullName);
  await pollRepository(fx.deps, b.fullName);
});
afterAll(() => fx.close());

describe("tenants never touch (attacks 9 and 13)", () => {
  it("the two repositories are in two installations", () => {
    expect(a.installationId).not.toBe(b.installationId);
  });

  it("refuses, with its line, a Loop whose repositories: names another installation's repository", async () => {
    const config = (await storedConfig(fx.db, b.fullName))!;
    expect(config.errors).toContainEqual(
      expect.objectContaining({ loop: "sneaky", token: "config_foreign_repository", line: 4, path: "loops.sneaky.repositories.0" }),
    );
    expect(config.errors.find((e) => e.loop === "sneaky")!.message).toContain("tenant-a/app in repositories: is not a repository of this installation");
    expect(config.loops.map((l) => l.name)).toEqual(["own"]);
    const sneaky = (await listLoops(fx.db, b.fullName)).find((l) => l.name === "sneaky")!;
    expect(sneaky).toMatchObject({ valid: false, errorLine: 4 });
  });

  it("refuses, with its line, a Loop that picks an agent the roster does not allow for its installation", async () => {
    const config = (await storedConfig(fx.db, b.fullName))!;
    const error = config.errors.find((e) => e.loop === "borrowed")!;
    expect(error).toMatchObject({ token: "config_agent_not_allowed", line: 9, path: "loops.borrowed.agent" });
    expect(error.message).toContain('The agent "fenced" is not allowed for tenant-b/ops');
    // the installation the roster names may use it
    expect((await storedConfig(fx.db, a.fullName))!.errors).toEqual([]);
  });

  it("a cross-installation Tick opens nothing, even from a config stored before the check", async () => {
    const stored = (await storedConfig(fx.db, b.fullName))!;
    const own = stored.loops.find((l) => l.name === "own")!;
    const forged: LoopDefinition = { ...own, name: "sneaky", trigger: { ...(own.trigger as Extract<LoopDefinition["trigger"], { kind: "schedule" }>), repositories: [a.fullName] } };
    await storeRepositoryConfig(fx.db, b.fullName, { ...stored, loops: [...stored.loops, forged], errors: [] });

    const outcome = await fireSchedule(fx.deps, b.fullName, "sneaky", new Date("2026-12-01T07:00:00Z"));
    expect(outcome).toMatchObject({ status: "fired", opened: [], targets: [{ repo: a.fullName, result: { tag: "Skipped", reason: "other_installation" } }] });
    expect(await runsOf(fx.db, a.fullName)).toEqual([]);
    const sneaky = (await listLoops(fx.db, b.fullName)).find((l) => l.name === "sneaky")!;
    expect(sneaky.error).toContain("belongs to another installation");
  });

  it("a Tick on a public repository waits for approval unless its Loop says approval:", async () => {
    const own = (await storedConfig(fx.db, b.fullName))!.loops.find((l) => l.name === "own")!;
    const at = new Date("2026-12-01T06:00:00Z");
    expect(tickEvent(own, { fullName: "tenant-b/site", private: false }, at, "p").submission).toMatchObject({
      approvalRequired: true,
      approvalReason: { token: "public_repository" },
      actor: null,
    });
    expect(tickEvent({ ...own, approval: "none", approvalGiven: true }, { fullName: "tenant-b/site", private: false }, at, "p").submission.approvalRequired).toBe(false);
    expect(tickEvent(own, { fullName: "tenant-b/tools", private: true }, at, "p").submission.approvalRequired).toBe(false);
  });

  it("a Tick carries the model its Loop picked to the Run it opens; without model: the agent's default", async () => {
    const own = (await storedConfig(fx.db, b.fullName))!.loops.find((l) => l.name === "own")!;
    const at = new Date("2026-12-01T06:00:00Z");
    expect(tickEvent({ ...own, model: "claude-haiku-4-5" }, { fullName: "tenant-b/tools", private: true }, at, "p").submission.model).toBe("claude-haiku-4-5");
    expect(tickEvent(own, { fullName: "tenant-b/tools", private: true }, at, "p").submission).not.toHaveProperty("model");
  });

  it("a Tick on a repository of its own installation opens a Run that records the repository declaring it", async () => {
    const outcome = await fireSchedule(fx.deps, b.fullName, "own", new Date("2026-12-01T07:00:00Z"));
    expect(outcome).toMatchObject({ status: "fired", opened: [expect.any(String)] });
    const { rows } = await fx.db.pool.query<{ repo: string; declared_in: string }>(
      `SELECT r.repo, e.submission->>'declaredIn' AS declared_in FROM runs r JOIN events e ON e.id = r.event_id WHERE r.loop = 'own'`,
    );
    expect(rows).toEqual([{ repo: "tenant-b/tools", declared_in: b.fullName }]);
  });
});

describe("allow: admits GitHub ids, not names (attack 23)", () => {
  const PINNED_CONFIG = START_DEV_CONFIG.replace("agent: demo", "agent: pinned");
  const pinned = roster.agents.pinned!;
  const mayUse = (repo: string) => mayUseAgent(fx.db, gitHubHost(fx.settings.baseUrl), pinned, repo);
  const agentError = async (repo: string) => (await storedConfig(fx.db, repo))!.errors.find((e) => e.token === "config_agent_not_allowed");

  it("a repository created under a listed repository's name after it was renamed may not use the agent; the renamed one still may", async () => {
    const original = await installRepository(fx, { owner: "tenant-c", name: "api", config: PINNED_CONFIG });
    await pollRepository(fx.deps, original.fullName);
    expect(await agentError(original.fullName)).toBeUndefined();

    fx.sim.renameRepo({ repo: "tenant-c/api", to: "api-old" });
    await reconcileInstallations(fx.deps);
    const squatter = await installRepository(fx, { owner: "tenant-c", name: "api", config: PINNED_CONFIG });
    expect(squatter.fullName).toBe("tenant-c/api");
    await pollRepository(fx.deps, squatter.fullName);

    expect(await mayUse("tenant-c/api")).toBe(false);
    expect(await mayUse("tenant-c/api-old")).toBe(true);
    expect(await agentError("tenant-c/api")).toMatchObject({ path: "loops.start-dev.agent", message: expect.stringContaining('The agent "pinned" is not allowed for tenant-c/api') });
    await pollRepository(fx.deps, "tenant-c/api-old");
    expect(await agentError("tenant-c/api-old")).toBeUndefined();
  });

  it("an account created under a listed account's login after it was renamed may not use the agent; the renamed account still may", async () => {
    await installRepository(fx, { owner: "tenant-d", name: "app", config: PINNED_CONFIG });
    expect(await mayUse("tenant-d/app")).toBe(true);

    fx.sim.renameUser({ login: "tenant-d", to: "tenant-d-renamed" });
    await reconcileInstallations(fx.deps);
    const squatter = await installRepository(fx, { owner: "tenant-d", name: "app", config: PINNED_CONFIG });
    await pollRepository(fx.deps, squatter.fullName);

    expect(await mayUse("tenant-d/app")).toBe(false);
    expect(await mayUse("tenant-d-renamed/app")).toBe(true);
    expect(await agentError("tenant-d/app")).toMatchObject({ message: expect.stringContaining('The agent "pinned" is not allowed for tenant-d/app') });
  });
});
