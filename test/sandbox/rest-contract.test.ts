import type { Probot } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api, demoInstallationId, probotFor } from "./support/probot";
import { SchemaChecker } from "./support/schema-checker";

const SCHEMAS = [
  "integration",
  "installation",
  "installation-token",
  "repository",
  "full-repository",
  "issue",
  "issue-comment",
  "label",
  "pull-request",
  "pull-request-simple",
  "check-run",
  "content-file",
  "repository-collaborator-permission",
  "private-user",
  "rate-limit-overview",
  "basic-error",
  "validation-error",
];

let sim: Simulator;
let probot: Probot;
let octokit: Awaited<ReturnType<Probot["auth"]>>;
let schemas: SchemaChecker;

function conforms(value: unknown, schema: string): void {
  expect(schemas.check(value, schema), `${schema} contract`).toEqual([]);
  if (!Array.isArray(value)) for (const key of schemas.requiredKeys(schema)) expect(value).toHaveProperty([key]);
}

function each(values: unknown[], schema: string): void {
  expect(values.length).toBeGreaterThan(0);
  for (const value of values) conforms(value, schema);
}

async function status(promise: Promise<unknown>): Promise<{ status: number; data: unknown }> {
  try {
    await promise;
    return { status: 200, data: undefined };
  } catch (error) {
    const e = error as { status: number; response?: { data: unknown } };
    return { status: e.status, data: e.response?.data };
  }
}

const repo = { owner: "demo-org", repo: "webapp" };

beforeAll(async () => {
  schemas = new SchemaChecker(SCHEMAS);
  sim = await startSimulator({ seed: "demo" });
  probot = probotFor(sim);
  octokit = await probot.auth(demoInstallationId(sim));
});

afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
});

describe("App authentication routes", () => {
  it("GET /app, /app/installations and /app/installations/{id} answer the App JWT with GitHub's shapes", async () => {
    const app = await probot.auth();
    conforms((await app.request("GET /app")).data, "integration");
    const list = await app.request("GET /app/installations");
    each(list.data, "installation");
    conforms((await app.request("GET /app/installations/{installation_id}", { installation_id: demoInstallationId(sim) })).data, "installation");
    conforms((await app.request("GET /repos/{owner}/{repo}/installation", repo)).data, "installation");
  });

  it("mints a one-hour token narrowed to repositories and permissions, and refuses a permission the installation lacks (422)", async () => {
    const app = await probot.auth();
    const { data } = await app.request("POST /app/installations/{installation_id}/access_tokens", {
      installation_id: demoInstallationId(sim),
      repositories: ["webapp"],
      permissions: { issues: "read" },
    });
    conforms(data, "installation-token");
    expect(Date.parse(data.expires_at) - Date.now()).toBeGreaterThan(59 * 60 * 1000);
    expect(data.repositories?.map((r) => r.full_name)).toEqual(["demo-org/webapp"]);
    expect(data.permissions).toEqual({ issues: "read", metadata: "read" });
    const refused = await status(
      app.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: demoInstallationId(sim), permissions: { administration: "write" } }),
    );
    expect(refused.status).toBe(422);
    conforms(refused.data, "validation-error");

    const narrowed = await api(sim, "/repos/demo-org/webapp/issues", { token: data.token });
    expect(narrowed.status).toBe(200);
    const readOnly = await api(sim, "/repos/demo-org/webapp/labels", { token: data.token, method: "POST", body: JSON.stringify({ name: "x" }) });
    expect(readOnly.status).toBe(403);
    expect(((await readOnly.json()) as { message: string }).message).toBe("Resource not accessible by integration");
  });

  it("refuses a JWT signed by another key and one that expires too late", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const { signAppJwt } = await import("../../lib/sandbox/index");
    const other = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs1", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    const forged = await api(sim, "/app", { headers: { authorization: `Bearer ${signAppJwt(sim.app.id, other.privateKey)}` } });
    expect(forged.status).toBe(401);
    const late = await api(sim, "/app", { headers: { authorization: `Bearer ${signAppJwt(sim.app.id, sim.app.privateKey, Date.now() + 20 * 60 * 1000)}` } });
    expect(late.status).toBe(401);
    expect(((await late.json()) as { message: string }).message).toMatch(/'Issued at' claim|'Expiration time' claim/);
    const ok = await api(sim, "/app", { headers: { authorization: `Bearer ${signAppJwt(sim.app.id, sim.app.privateKey)}` } });
    expect(ok.status).toBe(200);
  });

  it("GET /installation/repositories lists the token's repositories", async () => {
    const { data } = await octokit.request("GET /installation/repositories");
    expect(data.total_count).toBe(2);
    each(data.repositories, "repository");
  });
});

describe("repository, issues, labels, comments", () => {
  it("GET /repos/{o}/{r} is a full repository", async () => {
    conforms((await octokit.request("GET /repos/{owner}/{repo}", repo)).data, "full-repository");
  });

  it("issues: create, get, patch, list (pull requests included with their pull_request key)", async () => {
    const created = await octokit.request("POST /repos/{owner}/{repo}/issues", { ...repo, title: "From the contract test", body: "b", labels: ["bug"] });
    expect(created.status).toBe(201);
    conforms(created.data, "issue");
    expect(created.data.user?.login).toBe(`${sim.app.slug}[bot]`);
    const got = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}", { ...repo, issue_number: created.data.number });
    conforms(got.data, "issue");
    const patched = await octokit.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", { ...repo, issue_number: created.data.number, title: "Renamed", state: "closed" });
    conforms(patched.data, "issue");
    expect(patched.data.state).toBe("closed");
    expect(patched.data.closed_at).not.toBeNull();
    await sim.openPullRequest({ repo: "demo-org/webapp", head: "feature/contract", title: "A pull request" });
    const list = await octokit.request("GET /repos/{owner}/{repo}/issues", { ...repo, state: "all" });
    each(list.data, "issue");
    expect(list.data.some((i) => i.pull_request)).toBe(true);
    expect(list.data.some((i) => !i.pull_request)).toBe(true);
    const missing = await status(octokit.request("POST /repos/{owner}/{repo}/issues", { ...repo, title: "" }));
    expect(missing.status).toBe(422);
  });

  it("labels: list, create, 422 already_exists case-insensitively, invalid color and long names refused", async () => {
    each((await octokit.request("GET /repos/{owner}/{repo}/labels", repo)).data, "label");
    const created = await octokit.request("POST /repos/{owner}/{repo}/labels", { ...repo, name: "needs-review", color: "fbca04" });
    expect(created.status).toBe(201);
    conforms(created.data, "label");
    const dup = await status(octokit.request("POST /repos/{owner}/{repo}/labels", { ...repo, name: "Needs-Review", color: "fbca04" }));
    expect(dup.status).toBe(422);
    conforms(dup.data, "validation-error");
    expect((dup.data as { errors: Array<{ code: string }> }).errors[0]?.code).toBe("already_exists");
    expect((await status(octokit.request("POST /repos/{owner}/{repo}/labels", { ...repo, name: "c", color: "#fff000" }))).status).toBe(422);
    expect((await status(octokit.request("POST /repos/{owner}/{repo}/labels", { ...repo, name: "x".repeat(51) }))).status).toBe(422);
  });

  it("issue labels: add, replace, remove (404 for a label the item does not have)", async () => {
    const added = await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", { ...repo, issue_number: 1, labels: ["ready-for-agent", "brand-new"] });
    each(added.data, "label");
    expect(added.data.map((l) => l.name)).toEqual(["enhancement", "ready-for-agent", "brand-new"]);
    const replaced = await octokit.request("PUT /repos/{owner}/{repo}/issues/{issue_number}/labels", { ...repo, issue_number: 1, labels: ["bug"] });
    expect(replaced.data.map((l) => l.name)).toEqual(["bug"]);
    const removed = await octokit.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", { ...repo, issue_number: 1, name: "bug" });
    expect(removed.data).toEqual([]);
    expect((await status(octokit.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", { ...repo, issue_number: 1, name: "bug" }))).status).toBe(404);
  });

  it("labels: rename (the Items keep it), recolour, delete (gone from the Items), 404 and 422 as GitHub", async () => {
    await octokit.request("POST /repos/{owner}/{repo}/labels", { ...repo, name: "to-rename", color: "ffffff" });
    await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", { ...repo, issue_number: 3, labels: ["to-rename"] });
    const renamed = await octokit.request("PATCH /repos/{owner}/{repo}/labels/{name}", { ...repo, name: "To-Rename", new_name: "renamed", color: "00FF00" });
    conforms(renamed.data, "label");
    expect(renamed.data).toMatchObject({ name: "renamed", color: "00ff00" });
    const onItem = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}/labels", { ...repo, issue_number: 3 });
    expect(onItem.data.map((l) => l.name)).toContain("renamed");
    expect((await status(octokit.request("PATCH /repos/{owner}/{repo}/labels/{name}", { ...repo, name: "renamed", new_name: "bug" }))).status).toBe(422);
    expect((await status(octokit.request("PATCH /repos/{owner}/{repo}/labels/{name}", { ...repo, name: "renamed", color: "green" }))).status).toBe(422);
    const deleted = await octokit.request("DELETE /repos/{owner}/{repo}/labels/{name}", { ...repo, name: "renamed" });
    expect(deleted.status).toBe(204);
    const after = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}/labels", { ...repo, issue_number: 3 });
    expect(after.data.map((l) => l.name)).not.toContain("renamed");
    expect((await status(octokit.request("DELETE /repos/{owner}/{repo}/labels/{name}", { ...repo, name: "renamed" }))).status).toBe(404);
  });

  it("comments: create, list, edit", async () => {
    const created = await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...repo, issue_number: 2, body: "hello" });
    expect(created.status).toBe(201);
    conforms(created.data, "issue-comment");
    each((await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...repo, issue_number: 2 })).data, "issue-comment");
    const edited = await octokit.request("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", { ...repo, comment_id: created.data.id, body: "edited" });
    conforms(edited.data, "issue-comment");
    expect(edited.data.body).toBe("edited");
  });

  it("comments: writing or editing one touches its Item's updated_at; the repository's listing answers those changed since, by update", async () => {
    const issue = async () => (await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}", { ...repo, issue_number: 2 })).data.updated_at;
    sim.advanceClock({ ms: 60_000 });
    const since = sim.now().now;
    const first = await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...repo, issue_number: 2, body: "first" });
    expect(await issue()).toBe(first.data.updated_at);
    sim.advanceClock({ ms: 60_000 });
    const second = await octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...repo, issue_number: 2, body: "second" });
    sim.advanceClock({ ms: 60_000 });
    const edited = await octokit.request("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", { ...repo, comment_id: first.data.id, body: "first, edited" });
    expect(await issue()).toBe(edited.data.updated_at);
    const listed = (await octokit.request("GET /repos/{owner}/{repo}/issues/comments", { ...repo, since, sort: "updated", direction: "asc" })).data;
    each(listed, "issue-comment");
    expect(listed.map((c) => c.id)).toEqual([second.data.id, first.data.id]);
    expect(listed[0]!.issue_url).toMatch(/\/issues\/2$/);
    const invalid = await octokit.request("GET /repos/{owner}/{repo}/issues/comments", { ...repo, sort: "comments" as "updated" }).catch((e: { status: number }) => e);
    expect(invalid.status).toBe(422);
  });
});

describe("pull requests, check runs, contents, permissions", () => {
  it("pulls: create needs an existing head branch (422), reads the head sha from git; list with head filter; get; patch", async () => {
    const refused = await status(octokit.request("POST /repos/{owner}/{repo}/pulls", { ...repo, title: "x", head: "no-such-branch", base: "main" }));
    expect(refused.status).toBe(422);
    const { after } = await sim.pushCommit({ repo: "demo-org/webapp", branch: "feature/pulls", files: { "a.txt": "a\n" } });
    const created = await octokit.request("POST /repos/{owner}/{repo}/pulls", { ...repo, title: "Pulls", head: "demo-org:feature/pulls", base: "main", draft: true });
    conforms(created.data, "pull-request");
    expect(created.data.head.sha).toBe(after);
    expect(created.data.mergeable).toBeNull();
    const list = await octokit.request("GET /repos/{owner}/{repo}/pulls", { ...repo, head: "demo-org:feature/pulls" });
    each(list.data, "pull-request-simple");
    expect(list.data.map((p) => p.number)).toEqual([created.data.number]);
    await octokit.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", { ...repo, pull_number: created.data.number });
    await sim.computeMergeable({ repo: "demo-org/webapp", number: created.data.number });
    const got = await octokit.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", { ...repo, pull_number: created.data.number });
    conforms(got.data, "pull-request");
    expect(got.data.mergeable).toBe(true);
    expect(got.data.updated_at).toBe(created.data.updated_at);
    const patched = await octokit.request("PATCH /repos/{owner}/{repo}/pulls/{pull_number}", { ...repo, pull_number: created.data.number, title: "Pulls, renamed" });
    conforms(patched.data, "pull-request");
  });

  it("check runs: create, update, list for a ref; GitHub's limits are 422", async () => {
    const sha = (await octokit.request("GET /repos/{owner}/{repo}/pulls", repo)).data[0]?.head.sha ?? "";
    const created = await octokit.request("POST /repos/{owner}/{repo}/check-runs", {
      ...repo,
      name: "atelier",
      head_sha: sha,
      status: "in_progress",
      output: { title: "Running", summary: "The agent is at work" },
      actions: [{ label: "Cancel", description: "Stop the agent", identifier: "cancel" }],
    });
    expect(created.status).toBe(201);
    conforms(created.data, "check-run");
    const updated = await octokit.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { ...repo, check_run_id: created.data.id, status: "completed", conclusion: "success" });
    conforms(updated.data, "check-run");
    const list = await octokit.request("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", { ...repo, ref: sha });
    each(list.data.check_runs, "check-run");
    const bad = async (body: Record<string, unknown>): Promise<number> =>
      (await status(octokit.request("POST /repos/{owner}/{repo}/check-runs", { ...repo, name: "atelier", head_sha: sha, ...body }))).status;
    expect(await bad({ status: "completed" })).toBe(422);
    expect(await bad({ conclusion: "action_required" })).toBe(422);
    expect(await bad({ actions: [1, 2, 3, 4].map((i) => ({ label: `a${i}`, description: "d", identifier: `i${i}` })) })).toBe(422);
    expect(await bad({ actions: [{ label: "a label longer than twenty", description: "d", identifier: "i" }] })).toBe(422);
    expect(await bad({ actions: [{ label: "a", description: "x".repeat(41), identifier: "i" }] })).toBe(422);
    expect(await bad({ actions: [{ label: "a", description: "d", identifier: "x".repeat(21) }] })).toBe(422);
    expect(await bad({ output: { title: "t", summary: "x".repeat(65536) } })).toBe(422);
    expect(await bad({ conclusion: "action_required", details_url: "https://example.test/run" })).toBe(200);
  });

  it("contents: base64 file, raw file, 404; Probot's config loader reads .github/atelier.yml", async () => {
    const file = await octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { ...repo, path: ".github/atelier.yml" });
    conforms(file.data, "content-file");
    const text = Buffer.from((file.data as { content: string }).content, "base64").toString("utf8");
    expect(text).toContain("start-dev");
    expect((await status(octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { ...repo, path: "nope.txt" }))).status).toBe(404);
    const config = await octokit.config.get({ ...repo, path: ".github/atelier.yml" });
    expect((config.config as { loops: Record<string, { agent: string }> }).loops["start-dev"]?.agent).toBe("demo");
    const orgDefaults = await octokit.config.get({ owner: "demo-org", repo: ".github", path: ".github/atelier.yml" });
    expect(orgDefaults.files.map((f) => f.config)).toEqual([null]);
  });

  it("collaborator permission reports each user's role", async () => {
    for (const [login, permission] of [["octo-admin", "admin"], ["octo-writer", "write"], ["octo-reader", "read"]] as const) {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/collaborators/{username}/permission", { ...repo, username: login });
      conforms(data, "repository-collaborator-permission");
      expect(data.permission).toBe(permission);
    }
  });

  it("a user token acts with the user's permissions: /user, /user/installations, reads, and no writes for a reader", async () => {
    const { token } = sim.createUserToken({ login: "octo-reader" });
    const user = await api(sim, "/user", { token });
    conforms(await user.json(), "private-user");
    const installations = (await (await api(sim, "/user/installations", { token })).json()) as { total_count: number; installations: unknown[] };
    expect(installations.total_count).toBe(1);
    each(installations.installations, "installation");
    const repos = (await (await api(sim, `/user/installations/${demoInstallationId(sim)}/repositories`, { token })).json()) as { repositories: unknown[] };
    each(repos.repositories, "repository");
    expect((await api(sim, "/repos/demo-org/webapp/issues", { token })).status).toBe(200);
    expect((await api(sim, "/repos/demo-org/webapp/issues/1/labels", { token, method: "POST", body: JSON.stringify({ labels: ["bug"] }) })).status).toBe(403);
    const stranger = sim.createUser({ login: "stranger" });
    const strangerToken = sim.createUserToken({ login: stranger.login }).token;
    expect((await api(sim, "/repos/demo-org/webapp", { token: strangerToken })).status).toBe(404);
  });

  it("GET /rate_limit reports the caller's buckets without spending one", async () => {
    const first = await octokit.request("GET /rate_limit");
    conforms(first.data, "rate-limit-overview");
    const second = await octokit.request("GET /rate_limit");
    expect(second.data.resources.core.remaining).toBe(first.data.resources.core.remaining);
  });
});
