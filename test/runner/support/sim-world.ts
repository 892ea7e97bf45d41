import { randomBytes } from "node:crypto";
import type { GitHubAppSettings } from "../../../lib/github/app-settings";
import { createGitHubApp, type GitHubApp } from "../../../lib/github/app-client";
import { silentLog } from "../../../lib/github/log";
import { appRunnerGitHub } from "../../../lib/runner/app-github";
import type { RunnerGitHub } from "../../../lib/runner/runner-deps";
import { startSimulator, type Simulator } from "../../../lib/sandbox";
import type { Db } from "../../../lib/store/kernel/db";

/**
 * GitHub for the runner tests: the simulator over real HTTP (REST, git smart HTTP, scoped
 * installation tokens), one installation on `demo-org` and a repository no other test file
 * uses, registered in Postgres; the runner reaches it through the App (appRunnerGitHub).
 */
export interface SimWorld {
  sim: Simulator;
  app: GitHubApp;
  settings: GitHubAppSettings;
  installationId: number;
  github: RunnerGitHub;
  /** Creates another repository in the installation (README.md and `files`) and registers it; returns owner/name, lower-cased. */
  addRepo(prefix?: string, files?: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

export function appFromSettings(settings: GitHubAppSettings): GitHubApp {
  return createGitHubApp(settings, { log: silentLog });
}

export function githubFromSettings(settings: GitHubAppSettings, db: Db): RunnerGitHub {
  return appRunnerGitHub(appFromSettings(settings), db);
}

export async function startSimWorld(db: Db, existing?: Simulator): Promise<SimWorld> {
  const sim = existing ?? (await startSimulator({ seed: "demo" }));
  const installationId = sim.state.installationForRepo(sim.state.repoByFullName("demo-org/webapp"))!.id;
  await db.pool.query(
    `INSERT INTO installations (id, account_login, updated_at) VALUES ($1, 'demo-org', now()) ON CONFLICT (id) DO NOTHING`,
    [installationId],
  );
  const settings: GitHubAppSettings = sim.appSettings();
  const app = appFromSettings(settings);
  return {
    sim,
    app,
    settings,
    installationId,
    github: appRunnerGitHub(app, db),
    async addRepo(prefix = "runner", files = {}) {
      const name = `${prefix}-${randomBytes(4).toString("hex")}`;
      const repo = `demo-org/${name}`;
      const made = await sim.createRepo({ owner: "demo-org", name, files: { "README.md": `# ${name}\n`, ...files } });
      sim.addRepository({ repo });
      // registered under the simulator's id (each simulator numbers from a random start): tokens are minted by it
      await db.pool.query(
        `INSERT INTO repositories (id, installation_id, full_name, default_branch, updated_at) VALUES ($1, $2, $3, 'main', now())`,
        [made.id, installationId, repo],
      );
      return repo;
    },
    close: () => (existing ? Promise.resolve() : sim.close()),
  };
}
