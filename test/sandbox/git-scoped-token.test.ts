import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { authedCloneUrl, git, tempDir } from "./support/git";
import { api, demoInstallationId, probotFor } from "./support/probot";

let sim: Simulator;
let dir: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
  dir = await tempDir();
});

afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
  await dir.remove();
});

async function mintToken(body: Record<string, unknown>): Promise<string> {
  const app = await probotFor(sim).auth();
  const { data } = await app.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: demoInstallationId(sim), ...body });
  return data.token;
}

describe("an installation token narrowed to one repository", () => {
  it("clones it, pushes a branch the API then sees, and opens a pull request from it", async () => {
    const token = await mintToken({ repositories: ["webapp"] });
    const work = join(dir.path, "webapp");
    const clone = await git(["clone", "--quiet", authedCloneUrl(sim.url, "demo-org/webapp", token), work], dir.path, dir.path);
    expect(clone.stderr).toBe("");
    expect(clone.code).toBe(0);
    await writeFile(join(work, "feature.txt"), "made by an agent\n");
    expect((await git(["checkout", "-q", "-b", "atelier/run-1"], work, dir.path)).code).toBe(0);
    expect((await git(["add", "feature.txt"], work, dir.path)).code).toBe(0);
    expect((await git(["commit", "-q", "-m", "Agent change"], work, dir.path)).code).toBe(0);
    const push = await git(["push", "-q", "origin", "atelier/run-1"], work, dir.path);
    expect(push.stderr).toBe("");
    expect(push.code).toBe(0);
    const head = (await git(["rev-parse", "HEAD"], work, dir.path)).stdout.trim();

    const file = await api(sim, "/repos/demo-org/webapp/contents/feature.txt?ref=atelier/run-1", { token });
    expect(file.status).toBe(200);
    const created = await api(sim, "/repos/demo-org/webapp/pulls", {
      token,
      method: "POST",
      body: JSON.stringify({ title: "Agent change", head: "atelier/run-1", base: "main" }),
    });
    expect(created.status).toBe(201);
    const pull = (await created.json()) as { number: number; head: { sha: string; ref: string } };
    expect(pull.head).toMatchObject({ sha: head, ref: "atelier/run-1" });

    await writeFile(join(work, "feature.txt"), "made by an agent, twice\n");
    await git(["commit", "-q", "-am", "Second change"], work, dir.path);
    expect((await git(["push", "-q", "origin", "atelier/run-1"], work, dir.path)).code).toBe(0);
    const second = (await git(["rev-parse", "HEAD"], work, dir.path)).stdout.trim();
    const updated = (await (await api(sim, `/repos/demo-org/webapp/pulls/${pull.number}`, { token })).json()) as { head: { sha: string } };
    expect(updated.head.sha).toBe(second);
    expect(sim.deliveries({ event: "pull_request", action: "synchronize" }).map((d) => d.payload.after)).toEqual([second]);
    expect(sim.counters.git).toBeGreaterThanOrEqual(4);
  });

  it("is refused on another repository of the same installation (404, over git and the API)", async () => {
    const token = await mintToken({ repositories: ["webapp"] });
    const other = await git(["ls-remote", authedCloneUrl(sim.url, "demo-org/api", token)], dir.path, dir.path);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/not found|404/i);
    expect((await api(sim, "/repos/demo-org/api", { token })).status).toBe(404);
  });

  it("can clone but not push without contents:write", async () => {
    const token = await mintToken({ repositories: ["webapp"], permissions: { contents: "read" } });
    const work = join(dir.path, "readonly");
    expect((await git(["clone", "--quiet", authedCloneUrl(sim.url, "demo-org/webapp", token), work], dir.path, dir.path)).code).toBe(0);
    await git(["commit", "-q", "--allow-empty", "-m", "nope"], work, dir.path);
    const push = await git(["push", "-q", "origin", "HEAD:refs/heads/nope"], work, dir.path);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/403|not granted/i);
  });

  it("without a token git is challenged (401); after the clock passes the token's hour it is refused (401)", async () => {
    const anonymous = await git(["ls-remote", `${sim.url}/demo-org/webapp.git`], dir.path, dir.path);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/terminal prompts disabled|Authentication failed|could not read Username/i);
    const token = await mintToken({ repositories: ["webapp"] });
    expect((await git(["ls-remote", authedCloneUrl(sim.url, "demo-org/webapp", token)], dir.path, dir.path)).code).toBe(0);
    sim.advanceClock({ ms: 60 * 60 * 1000 + 1 });
    const expired = await git(["ls-remote", authedCloneUrl(sim.url, "demo-org/webapp", token)], dir.path, dir.path);
    expect(expired.code).not.toBe(0);
    expect(expired.stderr).toMatch(/Authentication failed|401/i);
    const res = await api(sim, "/repos/demo-org/webapp", { token });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ message: "Bad credentials" });
  });
});
