import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { expect, test } from "./support";

/**
 * The README's walkthrough, as a newcomer runs it: a fresh clone of this repository, `npm start`
 * with no `.env` and none of Atelier's settings, then in Chromium: sign in → label an issue in
 * the simulator → its card appears on the Board without a reload → approve → the transcript
 * streams (setup of webapp's environment, the agent, verify passing its tests) → the pull
 * request is on the card, in review, and is no card of its own → merged in
 * the simulator, the card reaches Done, still without a reload (a merge changes no Run: the
 * Item change is what the live Board hears). Then Ctrl-C leaves no process.
 *
 * Three settings are given all the same, for the machine, not for Atelier: PORT and SIM_PORT
 * (free ports: CI may hold 3000 already; a newcomer keeps the defaults), and DATABASE_URL /
 * REDIS_URL naming a database and a Redis db of this spec's own (the defaults would share
 * them with whatever else runs here). node_modules is hard-linked from this checkout, and its
 * build cache copied (the clone still builds).
 */
const ROOT = resolve(import.meta.dirname, "..");
const e2eDb = new URL(process.env.E2E_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_e2e");
const databaseUrl = new URL(e2eDb);
databaseUrl.pathname = `${e2eDb.pathname}_newcomer`;
const redisUrl = process.env.E2E_NEWCOMER_REDIS_URL ?? "redis://127.0.0.1:6379/14";

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.once("error", rej);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => res(port));
    });
  });
}

async function dropDatabase(): Promise<void> {
  const admin = new URL(databaseUrl);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${databaseUrl.pathname.slice(1)}" WITH (FORCE)`);
  await client.end();
}

/** Live processes whose process group is one of `groups`. */
function membersOf(groups: Set<number>): string[] {
  const out: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z" && groups.has(Number(fields[2]))) out.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function groupsBelow(pid: number): Set<number> {
  const all: { pid: number; ppid: number; pgrp: number }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      all.push({ pid: Number(entry), ppid: Number(fields[1]), pgrp: Number(fields[2]) });
    } catch {
      // gone meanwhile
    }
  }
  const found = all.filter((p) => p.pid === pid);
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i]!.pid));
  return new Set(found.map((p) => p.pgrp));
}

test("the README's first hour: npm start in a fresh clone, sign in, label, the card live on the Board, approve, the transcript, the PR on the card", async ({ page }, info) => {
  test.setTimeout(25 * 60_000);
  const dir = mkdtempSync(join(tmpdir(), "atelier-newcomer-"));
  let start: ChildProcess | null = null;
  let output = "";
  try {
    execFileSync("git", ["clone", "--quiet", ROOT, dir]);
    execFileSync("cp", ["-al", join(ROOT, "node_modules"), join(dir, "node_modules")]);
    // npm start still runs `next build` in the clone, from the build cache this checkout's own
    // build left, as npm's cache is warm: the newcomer's second build, a third of the CPU (ADR 0095)
    if (existsSync(join(ROOT, ".next", "cache"))) {
      mkdirSync(join(dir, ".next"));
      execFileSync("cp", ["-r", join(ROOT, ".next", "cache"), join(dir, ".next", "cache")]);
    }
    // the clone's lockfile is as old as the installed packages: `npm start` installs nothing
    const installed = new Date(Date.now() - 24 * 3600_000);
    utimesSync(join(dir, "package-lock.json"), installed, installed);
    await dropDatabase();
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.flushdb();
    await redis.quit();

    const [port, simPort] = [await freePort(), await freePort()];
    start = spawn("npm", ["start"], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), SIM_PORT: String(simPort), DATABASE_URL: databaseUrl.toString(), REDIS_URL: redisUrl },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    start.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    start.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((res) => start!.once("exit", (code) => res(code)));
    await expect.poll(() => output, { timeout: 15 * 60_000, intervals: [1_000] }).toContain(`dashboard on http://localhost:${port}`);
    const simUrl = `http://127.0.0.1:${simPort}`;
    const control = async (method: string, input: Record<string, unknown>) => {
      const res = await fetch(`${simUrl}/_sim/control/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
      expect(res.ok, `${method}: ${res.status}`).toBe(true);
      return (await res.json()) as Record<string, unknown>;
    };

    // 1. open the dashboard and sign in (the simulator signs you in as octo-admin)
    await page.goto(`http://localhost:${port}/`);
    await page.waitForURL(/\/signin/);
    await page.getByTestId("signin-github").click();
    await page.waitForURL(/\/board/);
    await expect(page.getByTestId("viewer-login")).toHaveText("octo-admin");
    await expect(page.getByTestId("live-status")).toHaveAttribute("data-status", "live");
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    // 2. label an issue ready-for-agent in the simulator
    const repo = "demo-org/webapp";
    const issue = await control("createIssue", { repo, title: "A newcomer's first task", login: "octo-admin" });
    await control("addLabels", { repo, number: issue.number, labels: ["ready-for-agent"], login: "octo-admin" });

    // 3. its card shows on the Board, waiting for approval — without a reload
    const card = page.locator(`[data-testid="card"][data-item="${repo}#${String(issue.number)}"]`);
    await expect(card.getByTestId("card-run-state")).toHaveText("Waiting", { timeout: 60_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // approve it
    await card.getByTestId("card-run").click();
    await page.waitForURL(/\/runs\//);
    await page.getByTestId("action-approve").click();

    // 4. the demo agent's transcript streams on the Run page, then the pull request
    await expect(page.getByTestId("transcript-entry").first()).toBeVisible({ timeout: 120_000 });
    await expect(page.getByTestId("run-pr-link")).toBeVisible({ timeout: 120_000 });
    await expect(page.getByTestId("run-state")).toHaveText("Succeeded", { timeout: 120_000 });
    // webapp's environment: setup installed its dependency in a group of its own, then the
    // agent, then verify ran its tests on the agent's work — each with its duration
    await page.reload();
    await expect(page.getByTestId("transcript-setup")).toContainText("added 1 package");
    await expect(page.getByTestId("transcript")).toContainText(/setup passed in \d+\.\d s/);
    await expect(page.getByTestId("transcript")).toContainText(/agent demo finished in \d+\.\d s/);
    await expect(page.getByTestId("run-verify")).toHaveText("· the agent succeeded and verify passed");
    await expect(page.getByTestId("attempt-verify")).toContainText(/Verify npm test passed in \d+\.\d s/);
    await page.screenshot({ path: info.outputPath("newcomer-run.png"), fullPage: true });
    writeFileSync(info.outputPath("newcomer-transcript.txt"), await page.getByTestId("transcript").innerText());

    // the pull request is on the card, open, and is no card of its own
    await page.getByRole("link", { name: "Board" }).first().click();
    await page.waitForURL(/\/board/);
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    const pr = card.getByText(/^PR #\d+$/);
    await expect(pr).toBeVisible({ timeout: 30_000 });
    await expect(page.locator('[data-testid="lane"][data-lane="In review"]').locator(`[data-item="${repo}#${String(issue.number)}"]`)).toBeVisible();
    const prNumber = Number((await pr.textContent())!.replace(/\D/g, ""));
    await expect(card.getByTestId("card-pr-state")).toHaveText("open", { timeout: 30_000 });
    await expect(page.locator(`[data-testid="card"][data-item="${repo}#${prNumber}"]`)).toHaveCount(0);

    // the simulator's pages show what Atelier wrote: the issue's tracking comment, the
    // pull request's check run and its diff
    const simPage = await page.context().newPage();
    await expect(async () => {
      await simPage.goto(`${simUrl}/_sim/${repo}/items/${String(issue.number)}`);
      await expect(simPage.locator(".comment.bot").first()).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: 60_000, intervals: [1_000, 2_000] });
    await expect(async () => {
      await simPage.goto(`${simUrl}/_sim/${repo}/items/${String(prNumber)}`);
      await expect(simPage.locator(".check-run").first()).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: 60_000, intervals: [1_000, 2_000] });
    await expect(simPage.getByRole("heading", { name: /^Files changed \(\d+\)$/ })).toBeVisible();
    await simPage.close();

    // merge it in the simulator: the card reaches Done, merged, without a reload
    await control("mergePullRequest", { repo, number: prNumber, login: "octo-admin" });
    const done = page.locator('[data-testid="lane"][data-lane="Done"]').locator(`[data-item="${repo}#${String(issue.number)}"]`);
    await expect(done).toBeVisible({ timeout: 60_000 });
    await expect(done.getByTestId("card-pr-state")).toHaveText("merged");
    await expect(page.locator(`[data-testid="card"][data-item="${repo}#${prNumber}"]`)).toHaveCount(0);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // a quiet hour: no delivery failed (the first ones waited for the dashboard), no "fetch failed"
    const deliveries = (await (await fetch(`${simUrl}/_sim/deliveries`)).json()) as { event: string; action: string; status: string }[];
    expect(deliveries.filter((d) => d.status === "failed").map((d) => `${d.event}.${d.action}`)).toEqual([]);
    expect(output).not.toContain("fetch failed");

    // Ctrl-C: everything stops, nothing is left
    const groups = groupsBelow(start.pid!);
    // as Ctrl-C does: to the terminal's foreground group (npm itself dies of it, as it does there)
    process.kill(-start.pid!, "SIGINT");
    await exited;
    await expect.poll(() => membersOf(groups), { timeout: 60_000 }).toEqual([]);
    expect(output).toContain("atelier: stopping (SIGINT)");
    start = null;
  } finally {
    if (start?.pid) {
      for (const group of groupsBelow(start.pid)) {
        try {
          process.kill(-group, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
    test.info().attachments.push({ name: "npm-start.log", contentType: "text/plain", body: Buffer.from(output) });
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase().catch(() => undefined);
  }
});
