import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api } from "./support/probot";

let sim: Simulator;
let token: string;
let installationKey: string;

beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
  token = sim.createInstallationToken({ account: "demo-org" }).token;
  installationKey = `installation:${[...sim.state.installations.keys()][0]}`;
});

afterAll(async () => {
  await sim.close();
});

describe("conditional requests", () => {
  it("a second identical listing with If-None-Match answers 304, empty, and spends no rate limit", async () => {
    sim.resetCounters();
    const first = await api(sim, "/repos/demo-org/webapp/issues?state=all&sort=updated&direction=asc", { token });
    expect(first.status).toBe(200);
    await first.json();
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    const remaining = first.headers.get("x-ratelimit-remaining");
    const second = await api(sim, "/repos/demo-org/webapp/issues?state=all&sort=updated&direction=asc", { token, headers: { "if-none-match": etag ?? "" } });
    expect(second.status).toBe(304);
    expect(await second.text()).toBe("");
    expect(second.headers.get("x-ratelimit-remaining")).toBe(remaining);
    expect(sim.counters.notModified).toBe(1);
    expect(sim.counters.rest).toBe(1);
    expect(sim.counters.byCaller[installationKey]).toMatchObject({ rest: 1, notModified: 1 });

    sim.addLabels({ repo: "demo-org/webapp", number: 1, labels: ["ready-for-agent"] });
    const third = await api(sim, "/repos/demo-org/webapp/issues?state=all&sort=updated&direction=asc", { token, headers: { "if-none-match": etag ?? "" } });
    expect(third.status).toBe(200);
    expect(Number(third.headers.get("x-ratelimit-remaining"))).toBe(Number(remaining) - 1);
  });

  it("labels listing has an ETag too", async () => {
    const first = await api(sim, "/repos/demo-org/webapp/labels", { token });
    const again = await api(sim, "/repos/demo-org/webapp/labels", { token, headers: { "if-none-match": first.headers.get("etag") ?? "" } });
    expect(again.status).toBe(304);
  });
});

describe("listing semantics", () => {
  it("paginates with per_page ≤ 100 and a Link header with next and last", async () => {
    for (let i = 0; i < 5; i++) sim.createIssue({ repo: "demo-org/api", title: `Paged ${i}` });
    const page1 = await api(sim, "/repos/demo-org/api/issues?per_page=2", { token });
    const link = page1.headers.get("link") ?? "";
    expect(link).toContain('rel="next"');
    expect(link).toContain('rel="last"');
    const next = /<([^>]+)>; rel="next"/.exec(link)?.[1] ?? "";
    expect(next.startsWith(sim.url)).toBe(true);
    const page2 = (await (await fetch(next, { headers: { authorization: `token ${token}` } })).json()) as Array<{ number: number }>;
    expect(page2).toHaveLength(2);
    const last = /<([^>]+)>; rel="last"/.exec(link)?.[1] ?? "";
    expect(new URL(last).searchParams.get("page")).toBe("3");
    const capped = (await (await api(sim, "/repos/demo-org/api/issues?per_page=500", { token })).json()) as unknown[];
    expect(capped.length).toBe(6);
  });

  it("since keeps items updated at or after it; sort=updated&direction=asc orders them", async () => {
    sim.advanceClock({ ms: 60_000 });
    const since = sim.now().now;
    sim.comment({ repo: "demo-org/api", number: 1, body: "bump" });
    sim.editIssue({ repo: "demo-org/api", number: 2, title: "Paged 0, edited" });
    const items = (await (await api(sim, `/repos/demo-org/api/issues?since=${encodeURIComponent(since)}&sort=updated&direction=asc`, { token })).json()) as Array<{ number: number; updated_at: string }>;
    expect(items.map((i) => i.number).sort()).toEqual([1, 2]);
    expect(Date.parse(items[0]?.updated_at ?? "")).toBeLessThanOrEqual(Date.parse(items[1]?.updated_at ?? ""));
  });

  it("mergeable changes without updated_at changing", async () => {
    const pr = await sim.openPullRequest({ repo: "demo-org/api", head: "feature/m", title: "M" });
    sim.setMergeable({ repo: "demo-org/api", number: pr.number, mergeable: false });
    const got = (await (await api(sim, `/repos/demo-org/api/pulls/${pr.number}`, { token })).json()) as { mergeable: boolean | null; updated_at: string; mergeable_state: string };
    expect(got.mergeable).toBe(false);
    expect(got.mergeable_state).toBe("dirty");
    expect(got.updated_at).toBe(pr.updated_at);
  });
});

describe("rate limits and injected failures", () => {
  it("counts every call per installation and answers 403 with remaining 0 once exhausted", async () => {
    const fresh = sim.createUserToken({ login: "octo-writer" }).token;
    sim.setRateLimit({ caller: "user:octo-writer", limit: 3 });
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api(sim, "/repos/demo-org/webapp", { token: fresh });
      expect(res.status).toBe(200);
      seen.push(res.headers.get("x-ratelimit-remaining") ?? "");
      expect(res.headers.get("x-ratelimit-limit")).toBe("3");
      expect(res.headers.get("x-ratelimit-resource")).toBe("core");
      expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    }
    expect(seen).toEqual(["2", "1", "0"]);
    const refused = await api(sim, "/repos/demo-org/webapp", { token: fresh });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(((await refused.json()) as { message: string }).message).toMatch(/API rate limit exceeded/);
    sim.advanceClock({ ms: 61 * 60 * 1000 });
    expect((await api(sim, "/repos/demo-org/webapp", { token: fresh })).status).toBe(200);
  });

  it("failNext makes the next N matching requests answer 500, 502 or a secondary rate limit", async () => {
    const fresh = sim.createInstallationToken({ account: "demo-org" }).token;
    sim.failNext({ method: "GET", path: "/repos/{owner}/{repo}/issues", status: 502, count: 2 });
    expect((await api(sim, "/repos/demo-org/webapp/issues", { token: fresh })).status).toBe(502);
    expect((await api(sim, "/repos/demo-org/webapp/labels", { token: fresh })).status).toBe(200);
    expect((await api(sim, "/repos/demo-org/api/issues", { token: fresh })).status).toBe(502);
    expect((await api(sim, "/repos/demo-org/api/issues", { token: fresh })).status).toBe(200);
    sim.failNext({ path: "/repos/demo-org/*", status: 500 });
    expect((await api(sim, "/repos/demo-org/webapp", { token: fresh })).status).toBe(500);
    sim.failNext({ method: "POST", path: "/graphql", status: "secondary-rate-limit", retryAfter: 7 });
    const secondary = await api(sim, "/graphql", { token: fresh, method: "POST", body: JSON.stringify({ query: "{ rateLimit { cost } }" }) });
    expect(secondary.status).toBe(403);
    expect(secondary.headers.get("retry-after")).toBe("7");
    expect(((await secondary.json()) as { message: string }).message).toMatch(/secondary rate limit/);
    expect(sim.counters.injectedFailures).toBe(4);
  });

  it("GitHub's secondary limit arises by itself: the 81st content-creating request of a minute is a 403 asking for a minute, reads are not limited", async () => {
    const fresh = sim.createInstallationToken({ account: "demo-org" }).token;
    const label = (n: number) => api(sim, "/repos/demo-org/api/labels", { token: fresh, method: "POST", body: JSON.stringify({ name: `burst-${n}`, color: "ffffff" }) });
    for (let n = 0; n < 80; n++) expect((await label(n)).status).toBe(201);
    const refused = await label(80);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(((await refused.json()) as { message: string }).message).toMatch(/secondary rate limit/);
    expect((await api(sim, "/repos/demo-org/api/labels", { token: fresh })).status).toBe(200);
    sim.advanceClock({ ms: 61_000 });
    expect((await label(81)).status).toBe(201);
  });

  it("refuses a body over 65,536 characters with 422, as GitHub: an issue, a pull request, an edit, a comment", async () => {
    const fresh = sim.createInstallationToken({ account: "demo-org" }).token;
    const long = "x".repeat(65_537);
    const post = (path: string, body: unknown, method = "POST") => api(sim, `/repos/demo-org/webapp${path}`, { token: fresh, method, body: JSON.stringify(body) });
    const tooLong = async (response: Response) => {
      expect(response.status).toBe(422);
      expect(JSON.stringify(await response.json())).toMatch(/body is too long \(maximum is 65536 characters\)/);
    };
    await tooLong(await post("/issues", { title: "Long", body: long }));
    const issue = (await (await post("/issues", { title: "Short", body: "x".repeat(65_536) })).json()) as { number: number };
    await tooLong(await post(`/issues/${issue.number}`, { body: long }, "PATCH"));
    await tooLong(await post(`/issues/${issue.number}/comments`, { body: long }));
    await sim.pushCommit({ repo: "demo-org/webapp", branch: "long-body", files: { "long.txt": "1\n" } });
    await tooLong(await post("/pulls", { title: "Long", head: "long-body", base: "main", body: long }));
    expect((await post("/pulls", { title: "Short", head: "long-body", base: "main", body: "x".repeat(65_536) })).status).toBe(201);
  });

  it("an expired or unknown token is 401 Bad credentials; a token outside its scope gets 404", async () => {
    const narrowed = sim.createInstallationToken({ account: "demo-org", repositories: ["webapp"] }).token;
    expect((await api(sim, "/repos/demo-org/api/issues", { token: narrowed })).status).toBe(404);
    expect((await api(sim, "/repos/demo-org/webapp/issues", { token: narrowed })).status).toBe(200);
    const bogus = await api(sim, "/repos/demo-org/webapp/issues", { token: "ghs_nope" });
    expect(bogus.status).toBe(401);
    expect(await bogus.json()).toMatchObject({ message: "Bad credentials" });
    sim.advanceClock({ ms: 60 * 60 * 1000 + 1000 });
    expect((await api(sim, "/repos/demo-org/webapp/issues", { token: narrowed })).status).toBe(401);
  });
});

describe("unknown routes", () => {
  it("answer 404 and are recorded in unknownRequests", async () => {
    const before = sim.unknownRequests.length;
    const res = await api(sim, "/repos/demo-org/webapp/deployments", { token });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ message: "Not Found" });
    expect(sim.unknownRequests.slice(before)).toEqual([expect.objectContaining({ method: "GET", path: "/repos/demo-org/webapp/deployments" })]);
    expect(sim.counters.unknown).toBeGreaterThan(0);
    sim.unknownRequests.length = before;
  });
});
