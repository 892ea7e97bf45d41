import { afterAll, beforeAll, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api } from "./support/probot";
import { startReceiver } from "./support/receiver";

/**
 * The sandbox's GitHub as a newcomer reads it: an Item's page with what Atelier wrote there
 * (its tracking comment, its check run, its pull request's diff), and a multi-line editor for
 * repository files such as .github/atelier.yml whose save is a commit (and a push webhook).
 */
let sim: Simulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const repo = "demo-org/webapp";

beforeAll(async () => {
  receiver = await startReceiver();
  sim = await startSimulator({ seed: "demo", webhookUrl: receiver.url });
});
afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
  await receiver.close();
});

const html = async (path: string): Promise<{ status: number; text: string }> => {
  const res = await fetch(`${sim.url}${path}`);
  return { status: res.status, text: await res.text() };
};

/** Posts a page's form as a browser does (urlencoded, CRLF in a textarea); the redirect's target. */
async function submit(method: string, fields: Record<string, string>): Promise<string> {
  const res = await fetch(`${sim.url}/_sim/form/${method}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: sim.url },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  expect(res.status).toBe(302);
  return res.headers.get("location") ?? "";
}

it("an Item's page shows its comments, Atelier's tracking comment marked as the App's, and takes a multi-line comment", async () => {
  const token = sim.createInstallationToken({ account: "demo-org" }).token;
  const issue = sim.createIssue({ repo, title: "Page me", body: "The <body> of it", labels: ["bug"] });
  const tracking = await api(sim, `/repos/${repo}/issues/${issue.number}/comments`, { token, method: "POST", body: JSON.stringify({ body: "<!-- atelier -->\n**Atelier** — Run waiting for approval" }) });
  expect(tracking.status).toBe(201);
  sim.comment({ repo, number: issue.number, body: "A person's comment", login: "octo-writer" });

  const back = `/_sim/${repo}/items/${issue.number}`;
  expect(await submit("comment", { repo, number: String(issue.number), body: "two\r\nlines", _back: back })).toBe(`${back}?message=comment%3A+done`);
  const page = await html(back);
  expect(page.status).toBe(200);
  expect(page.text).toContain("The &lt;body&gt; of it");
  expect(page.text).toMatch(/atelier-sandbox\[bot\]<\/strong> \(App\)[\s\S]*&lt;!-- atelier --&gt;\n\*\*Atelier\*\* — Run waiting for approval/);
  expect(page.text).toContain("octo-writer");
  expect(page.text).toContain("A person&#39;s comment");
  expect(page.text).toContain("Comments (3)");
  expect(sim.deliveries({ event: "issue_comment" }).at(-1)?.payload).toMatchObject({ comment: { body: "two\r\nlines" } });
  // GitHub's html_url of the issue leads to that page
  const redirect = await fetch(`${sim.url}/${repo}/issues/${issue.number}`, { redirect: "manual" });
  expect(redirect.headers.get("location")).toBe(back);
  expect((await html(`/_sim/${repo}/items/9999`)).status).toBe(404);
});

it("a pull request's page shows its check runs (name, status, conclusion, output) and the diff git has", async () => {
  const token = sim.createInstallationToken({ account: "demo-org" }).token;
  await sim.pushCommit({ repo, branch: "atelier/run-7", files: { "src/dark-mode.ts": "export const dark = true;\n" }, message: "Dark mode" });
  const pr = await sim.openPullRequest({ repo, head: "atelier/run-7", title: "Dark mode toggle", login: "octo-writer" });
  const created = await api(sim, `/repos/${repo}/check-runs`, {
    token,
    method: "POST",
    body: JSON.stringify({ name: "atelier / start-dev", head_sha: pr.head.sha, status: "completed", conclusion: "success", output: { title: "Run succeeded", summary: "The agent made 1 commit." } }),
  });
  expect(created.status).toBe(201);

  const page = await html(`/_sim/${repo}/items/${pr.number}`);
  expect(page.text).toMatch(/atelier \/ start-dev<\/strong> <span class="check-status">completed<\/span> <span class="check-conclusion">success<\/span>/);
  expect(page.text).toContain("Run succeeded");
  expect(page.text).toContain("The agent made 1 commit.");
  expect(page.text).toContain("Files changed (1)");
  expect(page.text).toContain("<code>src/dark-mode.ts</code></td><td class=\"added\">+1</td>");
  expect(page.text).toContain("+export const dark = true;");

  // merged, it still shows what it changed
  await sim.mergePullRequest({ repo, number: pr.number });
  expect((await html(`/_sim/${repo}/items/${pr.number}`)).text).toContain("+export const dark = true;");
});

it("the file editor shows .github/atelier.yml in a textarea; saving commits it, multi-line, with LF ends, and GitHub's push goes out", async () => {
  const path = ".github/atelier.yml";
  const editor = `/_sim/edit?${new URLSearchParams({ repo, branch: "main", path }).toString()}`;
  const page = await html(editor);
  expect(page.status).toBe(200);
  expect(page.text).toMatch(/<textarea id="content" name="content"[^>]*>[^<]*loops:\n  start-dev:\n/);
  expect(page.text).toContain("contains(item.labels.*.name, &#39;ready-for-agent&#39;)");
  const listing = await html(`/_sim/edit?repo=${repo}`);
  expect(listing.text).toContain(".github/atelier.yml");

  const yaml = "loops:\r\n  broken:\r\n    on: nothing\r\n";
  const location = await submit("pushCommit", { repo, branch: "main", file: path, content: yaml, message: "Break the config", _back: editor });
  expect(location.startsWith("/_sim/edit?")).toBe(true);
  expect(new URL(location, sim.url).searchParams.get("message")).toBe("pushCommit: done");
  expect((await html(location)).text).toContain("loops:\n  broken:\n    on: nothing\n</textarea>");
  await sim.waitForWebhooks();
  const push = sim.deliveries({ event: "push" }).at(-1)?.payload as { ref: string; commits: { message: string; modified: string[] }[] };
  expect(push.ref).toBe("refs/heads/main");
  expect(push.commits).toEqual([expect.objectContaining({ message: "Break the config", modified: [path] })]);
  // a form never sends a person elsewhere
  expect(await submit("pushCommit", { repo, branch: "main", file: "x.txt", content: "x", _back: "https://example.com/" })).toMatch(/^\/_sim\?message=/);
});
