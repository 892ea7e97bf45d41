import { verify } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWebhookPayload } from "../../lib/github/webhook-payloads";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api, probotFor } from "./support/probot";
import { startReceiver, type Received } from "./support/receiver";
import { exampleKeys } from "./support/webhook-examples";

const REQUIRED: Record<string, string[]> = {
  issues: ["opened", "edited", "closed", "reopened", "labeled", "unlabeled"],
  pull_request: ["opened", "edited", "synchronize", "closed", "reopened", "labeled", "unlabeled", "ready_for_review", "converted_to_draft"],
  label: ["created", "edited", "deleted"],
  issue_comment: ["created"],
  check_run: ["created", "completed", "rerequested", "requested_action"],
  check_suite: ["requested", "rerequested"],
  push: [""],
  installation: ["created", "deleted", "suspend", "unsuspend"],
  installation_repositories: ["added", "removed"],
  repository: ["renamed", "transferred", "deleted"],
};

let sim: Simulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  receiver = await startReceiver();
  sim = await startSimulator({ seed: "demo", webhookUrl: receiver.url });
  await sim.waitForWebhooks();
});

afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
  await receiver.close();
});

async function settle(): Promise<void> {
  await sim.waitForWebhooks();
}

/** Every action the brief lists, as a person or the App would cause it. */
async function causeEveryEvent(): Promise<void> {
  const repo = "demo-org/webapp";
  const token = sim.createInstallationToken({ account: "demo-org" }).token;
  const issue = sim.createIssue({ repo, title: "Webhook tour", labels: ["bug"] });
  sim.editIssue({ repo, number: issue.number, title: "Webhook tour, edited" });
  sim.removeLabel({ repo, number: issue.number, label: "bug" });
  sim.editIssue({ repo, number: issue.number, state: "closed" });
  sim.editIssue({ repo, number: issue.number, state: "open" });
  sim.comment({ repo, number: issue.number, body: "A comment", login: "octo-writer" });
  sim.createLabel({ repo, name: "tour", color: "ffffff" });
  sim.editLabel({ repo, name: "tour", newName: "toured", color: "000000" });
  sim.deleteLabel({ repo, name: "toured" });

  const pr = await sim.openPullRequest({ repo, head: "feature/hooks", title: "Hooks", draft: true, labels: ["enhancement"] });
  sim.removeLabel({ repo, number: pr.number, label: "enhancement" });
  sim.editIssue({ repo, number: pr.number, body: "Now with a body" });
  await sim.pushCommit({ repo, branch: "feature/hooks", files: { "hooks.txt": "1\n" } });
  sim.setDraft({ repo, number: pr.number, draft: false });
  sim.setDraft({ repo, number: pr.number, draft: true });
  sim.editIssue({ repo, number: pr.number, state: "closed" });
  sim.editIssue({ repo, number: pr.number, state: "open" });

  const head = (await (await api(sim, `/repos/${repo}/pulls/${pr.number}`, { token })).json()) as { head: { sha: string } };
  const created = await api(sim, `/repos/${repo}/check-runs`, {
    token,
    method: "POST",
    body: JSON.stringify({ name: "atelier", head_sha: head.head.sha, status: "in_progress", actions: [{ label: "Approve", description: "Let the agent run", identifier: "approve" }] }),
  });
  const run = (await created.json()) as { id: number; check_suite: { id: number } };
  await api(sim, `/repos/${repo}/check-runs/${run.id}`, { token, method: "PATCH", body: JSON.stringify({ conclusion: "neutral" }) });
  sim.clickCheckRunAction({ checkRunId: run.id, identifier: "approve", login: "octo-admin" });
  sim.rerequestCheckRun({ checkRunId: run.id, login: "octo-admin" });
  sim.rerequestCheckSuite({ checkSuiteId: run.check_suite.id, login: "octo-admin" });

  await sim.createRepo({ owner: "demo-org", name: "extra" });
  sim.addRepository({ repo: "demo-org/extra" });
  sim.renameRepo({ repo: "demo-org/extra", to: "extra-renamed", login: "octo-admin" });
  sim.removeRepository({ repo: "demo-org/extra-renamed" });
  // the new owner's installation hears of a transfer, and of the deletion after it
  await sim.createRepo({ owner: "demo-org", name: "moving" });
  sim.createOrg({ login: "moving-org" });
  sim.createInstallation({ account: "moving-org", login: "octo-admin" });
  sim.transferRepo({ repo: "demo-org/moving", to: "moving-org", login: "octo-admin" });
  sim.deleteRepo({ repo: "moving-org/moving", login: "octo-admin" });
  sim.suspendInstallation({ account: "demo-org" });
  sim.createIssue({ repo, title: "Not delivered: the installation is suspended" });
  sim.unsuspendInstallation({ account: "demo-org" });
  sim.deleteInstallation({ account: "demo-org" });
}

describe("webhooks", () => {
  it("send every listed event, signed, with GitHub's headers and the top-level keys of @octokit/webhooks-examples", async () => {
    await causeEveryEvent();
    await settle();
    const seen = new Set(receiver.received.map((r) => `${r.event}.${r.action}`));
    for (const [event, actions] of Object.entries(REQUIRED)) for (const action of actions) expect(seen, `${event}.${action}`).toContain(`${event}.${action}`);
    expect(receiver.received.some((r) => JSON.parse(r.body).issue?.title === "Not delivered: the installation is suspended")).toBe(false);

    const probot = probotFor(sim);
    await probot.ready();
    let handled = 0;
    probot.onAny(() => {
      handled += 1;
    });
    for (const delivery of receiver.received) {
      const h = delivery.headers;
      expect(h["content-type"]).toBe("application/json");
      expect(h["user-agent"]).toMatch(/^GitHub-Hookshot\//);
      expect(h["x-github-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(h["x-github-hook-id"]).toBeTruthy();
      expect(h["x-github-hook-installation-target-type"]).toBe("integration");
      expect(h["x-github-hook-installation-target-id"]).toBe(String(sim.app.id));
      const signature = String(h["x-hub-signature-256"]);
      expect(await verify(sim.app.webhookSecret, delivery.body, signature)).toBe(true);
      const payload = JSON.parse(delivery.body) as Record<string, unknown>;
      const keys = Object.keys(payload);
      for (const key of exampleKeys(delivery.event, delivery.action)) expect(keys, `${delivery.event}.${delivery.action} has ${key}`).toContain(key);
      expect((payload.installation as { id?: number }).id).toEqual(expect.any(Number));
      await probot.webhooks!.verifyAndReceive({ id: delivery.delivery, name: delivery.event as never, payload: delivery.body, signature });
    }
    expect(handled).toBe(receiver.received.length);

    const opened = receiver.received.find((r) => r.event === "issues" && r.action === "opened" && JSON.parse(r.body).issue.title === "Webhook tour");
    expect(JSON.parse(opened?.body ?? "{}").issue.labels.map((l: { name: string }) => l.name)).toEqual(["bug"]);
    const requested = receiver.received.find((r) => r.event === "check_run" && r.action === "requested_action");
    expect(JSON.parse(requested?.body ?? "{}")).toMatchObject({ requested_action: { identifier: "approve" }, sender: { login: "octo-admin" } });
    const edited = receiver.received.find((r) => r.event === "label" && r.action === "edited");
    expect(JSON.parse(edited?.body ?? "{}")).toMatchObject({ label: { name: "toured", color: "000000" }, changes: { name: { from: "tour" }, color: { from: "ffffff" } } });
    const renamed = receiver.received.find((r) => r.event === "repository" && r.action === "renamed");
    expect(JSON.parse(renamed?.body ?? "{}")).toMatchObject({ changes: { repository: { name: { from: "extra" } } }, repository: { full_name: "demo-org/extra-renamed" } });
    const transferred = receiver.received.find((r) => r.event === "repository" && r.action === "transferred");
    expect(JSON.parse(transferred?.body ?? "{}")).toMatchObject({ changes: { owner: { from: { organization: { login: "demo-org" } } } }, repository: { full_name: "moving-org/moving" } });
    const deleted = receiver.received.find((r) => r.event === "repository" && r.action === "deleted");
    expect(JSON.parse(deleted?.body ?? "{}")).toMatchObject({ repository: { full_name: "moving-org/moving" } });
    // each is what Atelier's webhook route accepts for the event
    for (const r of [renamed, transferred, deleted]) expect(checkWebhookPayload("repository", JSON.parse(r!.body) as Record<string, unknown>).ok).toBe(true);
    const sync = receiver.received.find((r) => r.event === "pull_request" && r.action === "synchronize");
    expect(JSON.parse(sync?.body ?? "{}")).toMatchObject({ before: expect.stringMatching(/^[0-9a-f]{40}$/), after: expect.stringMatching(/^[0-9a-f]{40}$/) });
    // a push asks the App for the checks of its new head, once per commit; "Re-run all checks" asks again
    const suites = receiver.received.filter((r) => r.event === "check_suite").map((r) => JSON.parse(r.body) as { action: string; check_suite: { head_sha: string; status: string; app: { id: number } } });
    const pushed = receiver.received.find((r) => r.event === "push" && JSON.parse(r.body).ref === "refs/heads/feature/hooks");
    expect(suites.find((x) => x.action === "requested")).toMatchObject({ check_suite: { head_sha: JSON.parse(pushed?.body ?? "{}").after, status: "queued", app: { id: sim.app.id } } });
    expect(suites.filter((x) => x.action === "rerequested")).toHaveLength(1);
    const log = sim.deliveries();
    expect(log.every((d) => d.status === "delivered" && d.statusCode === 200)).toBe(true);
    // every delivery arrived once; overlapping, not necessarily in the order they were made
    expect(log.map((d) => d.id).sort()).toEqual(receiver.received.map((r) => r.delivery).sort());
  });
});

describe("lost, failed, paused and redelivered webhooks", () => {
  let s: Simulator;
  let r: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    r = await startReceiver();
    s = await startSimulator({ seed: "demo", webhookUrl: r.url });
    await s.waitForWebhooks();
    r.received.length = 0;
  });

  afterAll(async () => {
    await s.close();
    await r.close();
  });

  it("a dropped delivery never arrives; redelivering it sends the same X-GitHub-Delivery", async () => {
    s.dropNextWebhook();
    s.addLabels({ repo: "demo-org/webapp", number: 1, labels: ["ready-for-agent"] });
    s.comment({ repo: "demo-org/webapp", number: 1, body: "after the lost one" });
    await s.waitForWebhooks();
    const lost = s.deliveries({ event: "issues", action: "labeled" }).at(-1);
    expect(lost?.status).toBe("dropped");
    expect(r.received.map((x) => `${x.event}.${x.action}`)).toEqual(["issue_comment.created"]);

    const again = s.redeliver({ id: lost?.id ?? "" });
    expect(again.redelivery).toBe(true);
    await s.waitForWebhooks();
    expect(r.received.at(-1)).toMatchObject({ event: "issues", action: "labeled", delivery: lost?.id });
    expect(s.deliveries().at(-1)).toMatchObject({ id: lost?.id, redelivery: true, status: "delivered", statusCode: 200 });
  });

  it("a failed delivery is logged with its status and not retried; paused deliveries go out together on resume, overlapping as GitHub's, or in order one at a time when asked", async () => {
    r.received.length = 0;
    r.status = 500;
    s.createIssue({ repo: "demo-org/api", title: "Failing hook" });
    await s.waitForWebhooks();
    expect(s.deliveries().at(-1)).toMatchObject({ event: "issues", action: "opened", status: "failed", statusCode: 500 });
    expect(r.received).toHaveLength(1);
    r.status = 200;

    // by default GitHub waits for no delivery's answer to send the next: they overlap
    s.pauseWebhooks();
    for (const title of ["a", "b", "c", "d"]) s.createIssue({ repo: "demo-org/api", title });
    s.resumeWebhooks();
    await s.waitForWebhooks();
    expect(s.setWebhookConcurrency({ count: 1 }).maxInFlight).toBeGreaterThanOrEqual(4);
    expect(r.received.slice(1).map((x: Received) => JSON.parse(x.body).issue.title).sort()).toEqual(["a", "b", "c", "d"]);
    r.received.length = 1;

    s.pauseWebhooks();
    s.createIssue({ repo: "demo-org/api", title: "first" });
    s.createIssue({ repo: "demo-org/api", title: "second" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.received).toHaveLength(1);
    s.resumeWebhooks();
    await s.waitForWebhooks();
    expect(r.received.slice(1).map((x: Received) => JSON.parse(x.body).issue.title)).toEqual(["first", "second"]);
  });

  it("the same controls work over HTTP under /_sim", async () => {
    const post = (method: string, body: unknown): Promise<Response> =>
      fetch(`${s.url}/_sim/control/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await post("dropNextWebhook", {})).status).toBe(200);
    const issue = (await (await post("createIssue", { repo: "demo-org/webapp", title: "Over HTTP", login: "octo-writer" })).json()) as { number: number };
    expect(issue.number).toBeGreaterThan(0);
    await post("waitForWebhooks", {});
    const log = (await (await fetch(`${s.url}/_sim/deliveries`)).json()) as Array<{ id: string; status: string }>;
    const dropped = log.at(-1);
    expect(dropped?.status).toBe("dropped");
    expect((await post("redeliver", { id: dropped?.id })).status).toBe(200);
    await s.waitForWebhooks();
    expect(r.received.at(-1)?.delivery).toBe(dropped?.id);
    expect((await post("noSuchMethod", {})).status).toBe(404);
    const page = await fetch(`${s.url}/_sim`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Over HTTP");
  });
});
