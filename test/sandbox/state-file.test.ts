import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startSimulator } from "../../lib/sandbox/index";
import { authedCloneUrl, git, tempDir } from "./support/git";
import { api } from "./support/probot";

/**
 * `npm start` keeps the simulated GitHub in .atelier/sandbox: after a restart the repositories,
 * Items, comments, check runs, the App and its tokens are those Atelier's database knows, so
 * the Board shows what the simulator shows.
 */
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sim-state-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** The state as the control API reports it, without the moment it was asked. */
async function summary(url: string): Promise<unknown> {
  const { now: _now, ...rest } = (await (await fetch(`${url}/_sim/state`)).json()) as Record<string, unknown>;
  return rest;
}

it("a restarted simulator continues the world it kept: the same Items, repositories, App and tokens, without seeding again", async () => {
  const first = await startSimulator({ seed: "demo", dataDir, persist: true });
  expect(first.restored).toBe(false);
  const repo = "demo-org/webapp";
  const issue = first.createIssue({ repo, title: "Made before the restart", labels: ["bug"] });
  first.comment({ repo, number: issue.number, body: "<!-- atelier:tracking --> tracking", login: "octo-writer" });
  await first.openPullRequest({ repo, head: "feature/kept", title: "A kept PR" });
  const token = first.createInstallationToken({ account: "demo-org" }).token;
  // a change over HTTP (REST), as Atelier makes them
  const pulls = (await (await api(first, `/repos/${repo}/pulls`, { token })).json()) as { head: { sha: string } }[];
  const check = await api(first, `/repos/${repo}/check-runs`, { token, method: "POST", body: JSON.stringify({ name: "atelier", head_sha: pulls[0]!.head.sha, status: "in_progress" }) });
  expect(check.status).toBe(201);
  const app = first.app;
  const before = await summary(first.url);
  await first.close();

  const second = await startSimulator({ seed: "demo", dataDir, persist: true });
  try {
    expect(second.restored).toBe(true);
    expect(await summary(second.url)).toEqual(before);
    expect(second.app).toEqual(app);
    expect(second.deliveries()).toEqual([]);
    const comments = (await (await api(second, `/repos/${repo}/issues/${issue.number}/comments`, { token })).json()) as { body: string }[];
    expect(comments.map((c) => c.body)).toEqual(["<!-- atelier:tracking --> tracking"]);
    // numbering continues, and git kept the branches
    expect(second.createIssue({ repo, title: "After the restart" }).number).toBe(issue.number + 2);
    const dir = await tempDir();
    try {
      const clone = await git(["clone", "--quiet", "--branch", "feature/kept", authedCloneUrl(second.url, repo, token), join(dir.path, "w")], dir.path, dir.path);
      expect(clone.stderr).toBe("");
      expect(clone.code).toBe(0);
    } finally {
      await dir.remove();
    }
  } finally {
    await second.close();
  }
});

it("a kept file that does not parse starts a fresh demo world, with no repository of the old one", async () => {
  await writeFile(join(dataDir, "state.json"), "{ half a fi");
  const sim = await startSimulator({ seed: "demo", dataDir, persist: true });
  try {
    expect(sim.restored).toBe(false);
    const titles = ((await summary(sim.url)) as { repositories: { items: { title: string }[] }[] }).repositories.flatMap((r) => r.items.map((i) => i.title));
    expect(titles).not.toContain("Made before the restart");
    expect(titles).toContain("Add a dark mode toggle");
  } finally {
    await sim.close();
  }
});
