import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "./free-port";

/**
 * A real npm registry on this machine for the tests (verdaccio, ADR 0043): started on a free
 * port with the small packages of npm-packages/ published by the real npm client. It has no
 * uplink: an install from it never reaches the internet.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

export interface LocalNpmRegistry {
  port: number;
  /** http://127.0.0.1:<port>/ */
  url: string;
  /** An npmrc with the registry and a token: pass it as npm's --userconfig. */
  npmrc: string;
  stop(): Promise<void>;
}

export async function startNpmRegistry(): Promise<LocalNpmRegistry> {
  const dir = mkdtempSync(join(tmpdir(), "atelier-npm-registry-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const child: ChildProcess = spawn(process.execPath, [join(HERE, "verdaccio-server.mjs"), dir, String(port)], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stderr?.on("data", (c: Buffer) => (log += c.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => (c.toString().includes("ready") ? resolve() : (log += c.toString())));
    child.once("exit", (code) => reject(new Error(`verdaccio exited with ${code}: ${log}`)));
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const user = await fetch(`${url}-/user/org.couchdb.user:atelier`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "atelier", password: "atelier-test-password" }),
    });
    const { token } = (await user.json()) as { token: string };
    const npmrc = join(dir, "npmrc");
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    // dependencies first: greet-lite needs shout-lite
    for (const name of readdirSync(join(HERE, "npm-packages")).sort().reverse()) {
      await run("npm", ["publish", join(HERE, "npm-packages", name), "--userconfig", npmrc, "--registry", url, "--access", "public", "--no-audit"], {
        env: { ...process.env, npm_config_cache: join(dir, "npm-cache"), npm_config_update_notifier: "false" },
      });
    }
    return { port, url, npmrc, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
