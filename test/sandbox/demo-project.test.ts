import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseInstanceConfig } from "../../lib/config/roster";
import { withDetectedPaths } from "../../lib/executor/environment/detect-ecosystem";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";
import { DEMO_ENVIRONMENT, DEMO_PROJECT_FILES } from "../../lib/sandbox/demo-project";
import { DEMO_CONFIG } from "../../lib/sandbox/seed";

/**
 * The sandbox's demo project (demo-org/webapp): its config declares setup and verify, its setup
 * installs the vendored dependency with the real npm client while every registry is out of
 * reach, and its tests pass on a clean checkout and fail on a note the agent broke.
 */
const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function checkout(): { root: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), "atelier-demo-project-"));
  dirs.push(root);
  for (const [path, text] of Object.entries(DEMO_PROJECT_FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  mkdirSync(join(root, ".home"));
  // a registry that is not there: were npm to ask one, the install would fail
  const env = { PATH: process.env.PATH, HOME: join(root, ".home"), npm_config_registry: "http://127.0.0.1:9/", npm_config_cache: join(root, ".home", "npm-cache"), CI: "true" };
  return { root, env };
}

describe("the sandbox's demo project", () => {
  it("declares setup and verify in a config that validates, its cache and key detected from the lockfile", () => {
    const roster = parseInstanceConfig("agents:\n  demo: { command: [atelier-demo-agent] }\n", "test-roster.yml");
    const config = parseRepositoryConfig(`${DEMO_CONFIG}${DEMO_ENVIRONMENT}`, { roster });
    expect(config.errors).toEqual([]);
    const env = config.loops[0]!.environment!;
    expect(env.setup).toBe("npm ci");
    expect(env.verify).toBe("npm test");
    const { root } = checkout();
    expect(withDetectedPaths(env, root)).toMatchObject({ cache: ["node_modules"], key: ["package-lock.json"] });
  });

  it("setup installs the dependency without any registry; the tests pass, and fail on a broken note", async () => {
    const { root, env } = checkout();
    await run("npm", ["ci"], { cwd: root, env });
    const passed = await run("npm", ["test"], { cwd: root, env });
    expect(passed.stdout).toMatch(/# pass 2/);

    mkdirSync(join(root, "atelier-demo"));
    writeFileSync(join(root, "atelier-demo", "7.md"), "# Atelier demo\n\nImplement issue #7\nBROKEN (on purpose)\n");
    const failed = await run("npm", ["test"], { cwd: root, env }).then(() => null, (err: { stdout: string }) => err.stdout);
    expect(failed).toMatch(/7\.md says BROKEN/);
    expect(failed).toMatch(/# fail 1/);
  }, 60_000);
});
