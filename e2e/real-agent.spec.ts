import { expect, sim, signIn, stack, test } from "./support";
import { CLAUDE_ANSWER, CLAUDE_FIRST_TEXT } from "./real-agent-script";

/**
 * The real Claude Code CLI through the whole product, as a user sees it: a repository whose
 * Loop runs the `claude` agent of the instance's roster (e2e/global-setup.ts: the CLI of the
 * dev dependency, in its sandbox, against a scripted Messages API), an issue labeled in the
 * simulator, the Run approved on the dashboard; the agent writes and commits, the pull request
 * carries its answer, and the Run page shows its steps and the exact cost (what the egress
 * gateway read of the model API's answers).
 */

const OWNER = "demo-org";
const NAME = "claude-app";
const REPO = `${OWNER}/${NAME}`;
const CONFIG = `loops:
  claude-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: claude
    approval: required
    prompt: |
      Implement issue #\${{ item.number }}: \${{ item.title }}
`;

interface PullRequest {
  number: number;
  body: string | null;
  head: { ref: string };
}

async function pullRequests(): Promise<PullRequest[]> {
  const { token } = await sim<{ token: string }>("createInstallationToken", { account: OWNER });
  const res = await fetch(`${stack.simUrl}/repos/${REPO}/pulls?state=all`, { headers: { authorization: `token ${token}`, accept: "application/vnd.github+json" } });
  if (!res.ok) throw new Error(`GET pulls: ${res.status}`);
  return (await res.json()) as PullRequest[];
}

test("label → approve → the real claude CLI commits in its sandbox → the PR carries its answer → Succeeded, exact cost, steps on the Run page", async ({ page }, info) => {
  test.skip(!stack.worker, "the worker (jobs/worker.ts) runs the agents");
  test.setTimeout(240_000);
  await sim("createRepo", { owner: OWNER, name: NAME, files: { ".github/atelier.yml": CONFIG } });
  await sim("setUserPermission", { repo: REPO, login: "octo-admin", permission: "admin" });
  await sim("createLabel", { repo: REPO, name: "ready-for-agent", color: "0e8a16" });
  await sim("addRepository", { repo: REPO });
  const issue = await sim<{ number: number }>("createIssue", { repo: REPO, title: "Add hello.txt", body: "A greeting in hello.txt, please.", login: "octo-admin" });

  await signIn(page, "octo-admin");
  await sim("addLabels", { repo: REPO, number: issue.number, labels: ["ready-for-agent"], login: "octo-admin" });
  const card = page.locator(`[data-item="${REPO}#${issue.number}"]`);
  await expect(async () => {
    await page.goto(`/board?repo=${REPO}`);
    await expect(card.getByTestId("card-run-state")).toHaveText("Waiting", { timeout: 1_000 });
  }).toPass({ timeout: 90_000, intervals: [1_000, 2_000] });

  await card.getByTestId("card-run").click();
  await page.waitForURL(/\/runs\//);
  await page.getByTestId("action-approve").click();
  await expect(page.getByTestId("run-state")).toHaveText("Succeeded", { timeout: 180_000 });
  await expect(page.getByTestId("run-pr-link")).toBeVisible();

  // the steps the adapter read from the CLI's stream, not its JSON lines
  await page.reload();
  const transcript = page.getByTestId("transcript");
  await expect(transcript.getByText(CLAUDE_FIRST_TEXT)).toBeVisible();
  await expect(transcript).not.toContainText('"type":"assistant"');
  const tool = transcript.getByTestId("transcript-tool");
  await expect(tool).toHaveCount(1);
  await expect(tool.locator("summary")).toContainText("Bash");
  await tool.locator("summary").click();
  await expect(tool.getByTestId("transcript-tool-result")).toContainText("committed");
  await expect(transcript.getByTestId("transcript-final")).toContainText(CLAUDE_ANSWER);

  // its model, and the cost the gateway read (exact), priced from the roster
  const attempt = page.getByTestId("attempt");
  await expect(attempt.getByTestId("attempt-model")).toHaveText("· claude-sonnet-4-5");
  await expect(attempt.getByTestId("attempt-cost")).toContainText("(exact)");
  await page.screenshot({ path: info.outputPath("real-agent-run.png"), fullPage: true });

  const pulls = await pullRequests();
  expect(pulls).toHaveLength(1);
  expect(pulls[0]!.body).toContain(CLAUDE_ANSWER);
});
