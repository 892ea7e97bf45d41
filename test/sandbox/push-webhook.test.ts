import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { authedCloneUrl, git, tempDir } from "./support/git";
import { startReceiver, type Received } from "./support/receiver";
import { exampleKeys } from "./support/webhook-examples";

/**
 * GitHub sends `push` however a branch moves: a `git push` over HTTP (an agent's branch, a
 * person's config change), a commit of the control API, a merge. Atelier reads
 * `.github/atelier.yml` again when a push to the default branch touches it.
 */
let sim: Simulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let dir: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  receiver = await startReceiver();
  sim = await startSimulator({ seed: "demo", webhookUrl: receiver.url });
  await sim.waitForWebhooks();
  dir = await tempDir();
});

afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
  await receiver.close();
  await dir.remove();
});

interface PushPayload {
  ref: string;
  before: string;
  after: string;
  created: boolean;
  deleted: boolean;
  forced: boolean;
  commits: { id: string; message: string; added: string[]; modified: string[]; removed: string[]; author: { name: string } }[];
  head_commit: { id: string } | null;
  pusher: { name: string };
  repository: { full_name: string };
  installation: { id: number };
}

async function nextPushes(since: number): Promise<PushPayload[]> {
  await sim.waitForWebhooks();
  return receiver.received.slice(since).filter((r: Received) => r.event === "push").map((r) => JSON.parse(r.body) as PushPayload);
}

const run = async (args: string[], cwd: string): Promise<void> => {
  const result = await git(args, cwd, dir.path);
  expect(result.code, `git ${args.join(" ")}: ${result.stderr}`).toBe(0);
};

it("git push over HTTP sends push: its commits with the paths they changed, a new branch, a forced push, a deleted branch", async () => {
  const token = sim.createInstallationToken({ account: "demo-org" }).token;
  const work = join(dir.path, "webapp");
  await run(["clone", "--quiet", authedCloneUrl(sim.url, "demo-org/webapp", token), work], dir.path);
  const before = (await git(["rev-parse", "HEAD"], work, dir.path)).stdout.trim();

  // two commits on main, one of them the config
  let since = receiver.received.length;
  await writeFile(join(work, ".github", "atelier.yml"), "loops: {}\n");
  await run(["commit", "-q", "-am", "Config: no loops"], work);
  await writeFile(join(work, "notes.txt"), "a note\n");
  await run(["add", "notes.txt"], work);
  await run(["rm", "-q", "README.md"], work);
  await run(["commit", "-q", "-m", "Notes instead of the README"], work);
  const after = (await git(["rev-parse", "HEAD"], work, dir.path)).stdout.trim();
  await run(["push", "-q", "origin", "main"], work);
  const [main] = await nextPushes(since);
  expect(main).toMatchObject({ ref: "refs/heads/main", before, after, created: false, deleted: false, forced: false, repository: { full_name: "demo-org/webapp" } });
  expect(main?.commits.map((c) => [c.message, c.added, c.modified, c.removed])).toEqual([
    ["Config: no loops", [], [".github/atelier.yml"], []],
    ["Notes instead of the README", ["notes.txt"], [], ["README.md"]],
  ]);
  expect(main?.head_commit?.id).toBe(after);
  expect(main?.commits[0]?.author.name).toBe("Agent");
  expect(main?.pusher.name).toBe("atelier-sandbox[bot]");
  const delivery = receiver.received.slice(since).find((r) => r.event === "push")!;
  for (const key of exampleKeys("push", "")) expect(Object.keys(main ?? {})).toContain(key);
  expect(delivery.headers["x-github-event"]).toBe("push");

  // a new branch lists only the commits no other branch has
  since = receiver.received.length;
  await run(["checkout", "-q", "-b", "topic"], work);
  await writeFile(join(work, "topic.txt"), "topic\n");
  await run(["add", "topic.txt"], work);
  await run(["commit", "-q", "-m", "Topic"], work);
  await run(["push", "-q", "origin", "topic"], work);
  const [created] = await nextPushes(since);
  expect(created).toMatchObject({ ref: "refs/heads/topic", before: "0".repeat(40), created: true, forced: false });
  expect(created?.commits.map((c) => c.message)).toEqual(["Topic"]);

  // rewritten and force-pushed, then deleted
  since = receiver.received.length;
  await run(["commit", "-q", "--amend", "-m", "Topic, again"], work);
  await run(["push", "-q", "--force", "origin", "topic"], work);
  await run(["push", "-q", "origin", "--delete", "topic"], work);
  const [forced, deleted] = await nextPushes(since);
  expect(forced).toMatchObject({ ref: "refs/heads/topic", forced: true });
  expect(forced?.commits.map((c) => c.message)).toEqual(["Topic, again"]);
  expect(deleted).toMatchObject({ ref: "refs/heads/topic", after: "0".repeat(40), deleted: true, commits: [], head_commit: null });
});

it("merging a pull request sends push to its base with what the merge changed", async () => {
  const repo = "demo-org/api";
  const pr = await sim.openPullRequest({ repo, head: "config-change", title: "Change the config" });
  await sim.pushCommit({ repo, branch: "config-change", files: { ".github/atelier.yml": "loops: {}\n" }, message: "No loops" });
  await sim.waitForWebhooks();
  const since = receiver.received.length;
  const { sha } = await sim.mergePullRequest({ repo, number: pr.number });
  const [push] = await nextPushes(since);
  expect(push).toMatchObject({ ref: "refs/heads/main", after: sha, created: false });
  expect(push?.commits.flatMap((c) => [...c.added, ...c.modified])).toContain(".github/atelier.yml");
});

it("a push to a ref outside refs/heads sends nothing (no workflow starts for it); the REST refs move branches as a push does (ADR 0058)", async () => {
  const token = sim.createInstallationToken({ account: "demo-org" }).token;
  const work = join(dir.path, "held");
  await run(["clone", "--quiet", authedCloneUrl(sim.url, "demo-org/webapp", token), work], dir.path);
  await writeFile(join(work, "package.json"), '{"scripts":{"test":"steal"}}\n');
  await run(["add", "package.json"], work);
  await run(["commit", "-q", "-m", "Held"], work);
  const held = (await git(["rev-parse", "HEAD"], work, dir.path)).stdout.trim();
  let since = receiver.received.length;
  await run(["push", "-q", "origin", "HEAD:refs/atelier/held/run-1"], work);
  expect(await nextPushes(since)).toEqual([]);

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sim.url}/repos/demo-org/webapp${path}`, {
      method,
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as { object?: { sha: string }; message?: string }) };
  };
  expect((await api("GET", "/git/ref/atelier/held/run-1")).body?.object?.sha).toBe(held);
  expect((await api("GET", "/git/ref/heads/held-branch")).status).toBe(404);
  expect((await api("POST", "/git/refs", { ref: "held-branch", sha: held })).status).toBe(422);
  expect((await api("POST", "/git/refs", { ref: "refs/heads/held-branch", sha: "f".repeat(40) })).body?.message).toBe("Object does not exist");

  // creating a branch on the held commit is a push of that branch
  since = receiver.received.length;
  expect((await api("POST", "/git/refs", { ref: "refs/heads/held-branch", sha: held })).status).toBe(201);
  expect((await api("POST", "/git/refs", { ref: "refs/heads/held-branch", sha: held })).body?.message).toBe("Reference already exists");
  const [created] = await nextPushes(since);
  expect(created).toMatchObject({ ref: "refs/heads/held-branch", after: held, created: true });

  // a move that is not a fast forward needs force; deleting the held ref sends nothing
  const main = (await api("GET", "/git/ref/heads/main")).body!.object!.sha;
  expect((await api("PATCH", "/git/refs/heads/held-branch", { sha: main })).body?.message).toBe("Update is not a fast forward");
  since = receiver.received.length;
  expect((await api("PATCH", "/git/refs/heads/held-branch", { sha: main, force: true })).status).toBe(200);
  expect((await api("DELETE", "/git/refs/atelier/held/run-1")).status).toBe(204);
  expect((await api("DELETE", "/git/refs/atelier/held/run-1")).body?.message).toBe("Reference does not exist");
  expect((await nextPushes(since)).map((p) => [p.ref, p.forced])).toEqual([["refs/heads/held-branch", true]]);
});
