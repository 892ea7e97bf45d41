import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { itemKey } from "../../lib/engine/ids";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { beginAttempt } from "../support/attempts";
import { resetCycleBudget } from "../../lib/store/runs/cycle-budget";
import { listLoops, setLoopPaused } from "../../lib/triggers/loop-status";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, runsOf, startFixture, type Fixture } from "../github/support/fixture";
import { markConfigStale } from "../../lib/store/items/repository-configs";
import { loadNeedsYou } from "../../lib/dashboard/needs-you";

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(() => fx.close());

const LABEL = "ready-for-agent";

const THREE_LOOPS = `labels:
  - { name: ${LABEL}, color: 0e8a16 }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, '${LABEL}')
    agent: demo
    prompt: Implement \${{ item.number }}
  triage:
    on: issues
    if: item.state == 'open'
    agent: demo
    prompt: Triage \${{ item.title }}
  broken:
    on: issues
    agent: claude
    prompt: never runs
`;

describe("repository config", () => {
  it("runs the two valid Loops of three and reports the broken one with its line and reason", async () => {
    const { fullName } = await installRepository(fx, { owner: "cfg-a", name: "app", config: THREE_LOOPS });
    const issue = fx.sim.createIssue({ repo: fullName, title: "Both", labels: [] });
    fx.sim.createLabel({ repo: fullName, name: LABEL, color: "0e8a16" });
    fx.sim.addLabels({ repo: fullName, number: issue.number, labels: [LABEL] });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ status: "polled", opened: [expect.any(String), expect.any(String)] });
    expect((await runsOf(fx.db, fullName)).map((r) => r.loop).sort()).toEqual(["start-dev", "triage"]);
    const loops = await listLoops(fx.db, fullName);
    expect(loops.map((l) => [l.name, l.valid])).toEqual([
      ["start-dev", true],
      ["triage", true],
      ["broken", false],
    ]);
    const broken = loops.find((l) => l.name === "broken")!;
    expect(broken).toMatchObject({ trigger: null, paused: false, errorLine: 16, error: expect.stringContaining('"claude", which is not in this instance\'s roster') });
    expect(loops.find((l) => l.name === "start-dev")).toMatchObject({ error: null, lastPolledAt: expect.any(Date) });
  });

  it("reports YAML that does not parse on the repository, with its line", async () => {
    const { fullName } = await installRepository(fx, { owner: "cfg-b", name: "app", config: "loops:\n  a: [unclosed\n" });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ status: "polled" });
    const { rows } = await fx.db.pool.query(`SELECT config_error FROM repositories WHERE full_name = $1`, [fullName]);
    expect(rows[0].config_error).toMatch(/line \d+: The YAML does not parse/);
    expect(await listLoops(fx.db, fullName)).toEqual([]);
  });

  it("a YAML list at the top of the file is a config error shown in Needs you, and no Loop runs", async () => {
    const list = "- start-dev:\n    on: issues\n    agent: demo\n    prompt: Implement it\n";
    const { fullName } = await installRepository(fx, { owner: "cfg-list", name: "app", config: list });
    fx.sim.createIssue({ repo: fullName, title: "Anything" });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ status: "polled", opened: [] });
    const needs = await loadNeedsYou(fx.db, [fullName]);
    expect(needs.needs.filter((n) => n.kind === "config_error")).toEqual([
      expect.objectContaining({ repo: fullName, detail: expect.stringContaining("must be a map with the keys labels: and loops:") }),
    ]);
  });

  it("a file that stops parsing keeps its Loops listed, each with the file's error and running none; fixed, they are back", async () => {
    const { fullName } = await installRepository(fx, { owner: "cfg-broken", name: "app", config: THREE_LOOPS });
    await pollRepository(fx.deps, fullName);
    expect((await listLoops(fx.db, fullName)).map((l) => l.name)).toEqual(["start-dev", "triage", "broken"]);

    await fx.sim.pushCommit({ repo: fullName, branch: "main", files: { ".github/atelier.yml": "loops:\n  start-dev: [unclosed\n" } });
    await markConfigStale(fx.db, [fullName]);
    await pollRepository(fx.deps, fullName);
    const broken = await listLoops(fx.db, fullName);
    expect(broken.map((l) => [l.name, l.valid])).toEqual([
      ["start-dev", false],
      ["triage", false],
      ["broken", false],
    ]);
    for (const l of broken) expect(l.error).toMatch(/The YAML does not parse/);

    await fx.sim.pushCommit({ repo: fullName, branch: "main", files: { ".github/atelier.yml": THREE_LOOPS } });
    await markConfigStale(fx.db, [fullName]);
    await pollRepository(fx.deps, fullName);
    const fixed = await listLoops(fx.db, fullName);
    expect(fixed.map((l) => [l.name, l.valid, l.error === null])).toEqual([
      ["start-dev", true, true],
      ["triage", true, true],
      ["broken", false, false],
    ]);
  });

  it("falls back to the owner's .github repository, and _extends merges its Loops under the repository's", async () => {
    const orgConfig = `labels:\n  - { name: ${LABEL}, color: 0e8a16 }\nloops:\n  start-dev:\n    on: issues\n    if: contains(item.labels.*.name, '${LABEL}')\n    agent: demo\n    prompt: Org default \${{ item.number }}\n`;
    await installRepository(fx, { owner: "cfg-c", name: ".github", config: orgConfig });
    const { fullName: plain } = await installRepository(fx, { owner: "cfg-c", name: "plain", config: null });
    const extended = `_extends: .github\nloops:\n  extra:\n    on: pull_requests\n    agent: nobody\n    prompt: x\n`;
    const { fullName: child } = await installRepository(fx, { owner: "cfg-c", name: "child", config: extended });
    await pollRepository(fx.deps, plain);
    await pollRepository(fx.deps, child);
    expect((await listLoops(fx.db, plain)).map((l) => [l.name, l.valid])).toEqual([["start-dev", true]]);
    const childLoops = await listLoops(fx.db, child);
    expect(childLoops.map((l) => [l.name, l.valid])).toEqual([
      ["start-dev", true],
      ["extra", false],
    ]);
    expect(childLoops[1]).toMatchObject({ errorLine: 5, error: expect.stringContaining('"nobody"') });
  });

  it("_extends names only the owner's .github: another repository's config is not merged, and nothing of it shows in the errors", async () => {
    const secretConfig = `loops:\n  leaky-loop-name:\n    on: issues\n    agent: demo\n    secret_key_name: hunter2\n    prompt: Deploy with \${{ item.number }}\n`;
    await installRepository(fx, { owner: "cfg-x", name: "secret", config: secretConfig });
    await installRepository(fx, { owner: "cfg-x", name: "broken", config: "loops:\n  a: [unclosed-secret-text\n" });
    await installRepository(fx, { owner: "cfg-y", name: "elsewhere", config: secretConfig });
    for (const target of ["secret", "cfg-x/secret", "cfg-y/elsewhere:.github/atelier.yml", "broken"]) {
      const { fullName } = await installRepository(fx, { owner: "cfg-x", name: `child-${target.replace(/[^a-z]/g, "")}`, config: `_extends: ${target}\nloops:\n  mine:\n    on: issues\n    agent: demo\n    prompt: Mine\n` });
      await pollRepository(fx.deps, fullName);
      expect(await listLoops(fx.db, fullName)).toEqual([]);
      const { rows } = await fx.db.pool.query(`SELECT config_error, config FROM repositories WHERE full_name = $1`, [fullName]);
      expect(rows[0].config_error).toContain("only cfg-x/.github may be extended");
      expect(rows[0].config.errors).toEqual([expect.objectContaining({ token: "config_extends_forbidden" })]);
      for (const leak of ["leaky-loop-name", "secret_key_name", "hunter2", "Deploy", "unclosed-secret-text"]) expect(JSON.stringify(rows[0])).not.toContain(leak);
    }
  });

  it("a paused Loop neither submits nor revokes; pausing and unpausing restart from an empty cursor", async () => {
    const { fullName } = await installRepository(fx, { owner: "cfg-d", name: "app" });
    await pollRepository(fx.deps, fullName);
    const issue = fx.sim.createIssue({ repo: fullName, title: "P", labels: [LABEL] });
    await pollRepository(fx.deps, fullName);
    expect(await runsOf(fx.db, fullName)).toHaveLength(1);

    const paused = await setLoopPaused(fx.db, fullName, "start-dev", true, "octo");
    expect(paused).toMatchObject({ name: "start-dev", paused: true, pausedBy: "octo" });
    fx.sim.removeLabel({ repo: fullName, number: issue.number, label: LABEL });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ fresh: true, revoked: [], opened: [] });
    expect((await runsOf(fx.db, fullName)).map((r) => r.state)).toEqual(["Pending"]);
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ fresh: false });

    await setLoopPaused(fx.db, fullName, "start-dev", false, "octo");
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ fresh: true, revoked: [expect.any(String)] });
    const { rows } = await fx.db.pool.query(`SELECT actor, action, detail FROM audit_log WHERE repo = $1 ORDER BY id`, [fullName]);
    expect(rows).toEqual([
      { actor: "octo", action: "pause_loop", detail: { loop: "start-dev" } },
      { actor: "octo", action: "unpause_loop", detail: { loop: "start-dev" } },
    ]);
    await expect(setLoopPaused(fx.db, fullName, "nope", true, "octo")).rejects.toMatchObject({ token: "loop_not_found", status: 404 });
  });

  it("a cycle budget reset makes the next poll start from an empty cursor and judge the Item in its new generation", async () => {
    const config = `labels:\n  - { name: ${LABEL}, color: 0e8a16 }\nloops:\n  start-dev:\n    on: issues\n    if: contains(item.labels.*.name, '${LABEL}')\n    agent: demo\n    max_cycles: 1\n    prompt: Implement \${{ item.body }}\n`;
    const { fullName } = await installRepository(fx, { owner: "cfg-e", name: "app", config });
    await pollRepository(fx.deps, fullName);
    const issue = fx.sim.createIssue({ repo: fullName, title: "Budget", body: "v1", labels: [LABEL] });
    await pollRepository(fx.deps, fullName);
    const [run] = await runsOf(fx.db, fullName);
    const begun = await beginAttempt(fx.db, run!.id, { token: "l", workerId: "w" });
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    const usage = { durationMs: 1, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false };
    await finishAttempt(fx.db, begun.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });

    fx.sim.editIssue({ repo: fullName, number: issue.number, body: "v2" });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ opened: [] });
    const { rows: blocked } = await fx.db.pool.query(`SELECT status, reason FROM events WHERE repo = $1 ORDER BY received_at DESC LIMIT 1`, [fullName]);
    expect(blocked).toEqual([{ status: "Blocked", reason: "cycle_budget_exhausted" }]);

    await resetCycleBudget(fx.db, itemKey(fullName, issue.number), "octo");
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ fresh: true, opened: [expect.any(String)] });
    const { rows } = await fx.db.pool.query(`SELECT reset_pending FROM repositories WHERE full_name = $1`, [fullName]);
    expect(rows).toEqual([{ reset_pending: false }]);
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ fresh: false, opened: [] });
  });

  it("the poll after a cycle budget reset reads the config again, however fresh it was", async () => {
    const { fullName } = await installRepository(fx, { owner: "cfg-reset", name: "app" });
    await pollRepository(fx.deps, fullName);
    await fx.sim.pushCommit({ repo: fullName, branch: "main", files: { ".github/atelier.yml": THREE_LOOPS } }); // its push webhook lost
    await pollRepository(fx.deps, fullName);
    expect((await listLoops(fx.db, fullName)).map((l) => l.name)).toEqual(["start-dev"]);
    // what resetCycleBudget marks on the repository (the reset itself is the test above)
    await fx.db.pool.query(`UPDATE repositories SET reset_pending = true WHERE full_name = $1`, [fullName]);
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ status: "polled", fresh: true });
    expect((await listLoops(fx.db, fullName)).map((l) => l.name)).toEqual(["start-dev", "triage", "broken"]);
  });

  it("a prompt that fails to render is that Loop's error; the other Loops run and the cursor advances", async () => {
    const config = `loops:\n  bad-prompt:\n    on: issues\n    agent: demo\n    prompt: \${{ fromJSON(item.body) }}\n  good:\n    on: issues\n    agent: demo\n    prompt: ok\n`;
    const { fullName } = await installRepository(fx, { owner: "cfg-f", name: "app", config });
    fx.sim.createIssue({ repo: fullName, title: "t", body: "not json" });
    const outcome = await pollRepository(fx.deps, fullName);
    expect(outcome).toMatchObject({ status: "polled", opened: [expect.any(String)] });
    expect((await runsOf(fx.db, fullName)).map((r) => r.loop)).toEqual(["good"]);
    const loops = await listLoops(fx.db, fullName);
    expect(loops.find((l) => l.name === "bad-prompt")).toMatchObject({ valid: true, error: expect.stringContaining("bad-prompt") });
    expect(loops.find((l) => l.name === "good")).toMatchObject({ error: null });
    const { rows } = await fx.db.pool.query(`SELECT cursor_since IS NOT NULL AS advanced, poll_error FROM repositories WHERE full_name = $1`, [fullName]);
    expect(rows).toEqual([{ advanced: true, poll_error: null }]);
  });
});
