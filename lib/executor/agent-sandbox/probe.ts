import { spawn } from "node:child_process";
import { bwrapArgs, hostSystemMounts } from "./bwrap-args";
import { boxUid } from "./box";

/**
 * Whether this host can sandbox an agent: bubblewrap installed, user namespaces allowed, and
 * (as root) a uid switch. Asked once per process; the answer says what to install when no.
 */

export type SandboxProbe = { ok: true } | { ok: false; reason: string };

export const SANDBOX_INSTALL_HINT =
  "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces, or set `sandbox: off` in atelier.config.yml to run agents unconfined";

let cached: Promise<SandboxProbe> | null = null;

function tryBwrap(): Promise<SandboxProbe> {
  const argv = ["bwrap", ...bwrapArgs({ identity: boxUid("probe").identity, mounts: hostSystemMounts(), cwd: "/", command: ["/bin/true"] })];
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], env: { PATH: "/usr/local/bin:/usr/bin:/bin" } });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.once("error", (err: NodeJS.ErrnoException) =>
      resolve({ ok: false, reason: err.code === "ENOENT" ? `${argv[0]} is not installed` : `${argv[0]}: ${err.message}` }),
    );
    child.once("close", (code) =>
      resolve(code === 0 ? { ok: true } : { ok: false, reason: `bubblewrap cannot make a sandbox here: ${stderr.trim().split("\n").pop() ?? `exit ${code}`}` }),
    );
  });
}

export function probeSandbox(): Promise<SandboxProbe> {
  cached ??= tryBwrap();
  return cached;
}
