import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { closeSync, openSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Readable } from "node:stream";
import { bwrapArgs, hostSystemMounts, SANDBOX_BIN, SANDBOX_OBJECTS, SANDBOX_HOME, SANDBOX_OUT, SANDBOX_RUN, SANDBOX_WORKSPACE, type Mount } from "./bwrap-args";
import type { AttemptBox } from "./box";
import { createAttemptCgroup, type AttemptCgroup } from "./cgroup";
import { startEgressGateway, type EgressGateway, type EgressRefusal } from "./egress-proxy";
import { watchChild, type ChildWatch } from "../child-watch";
import type { BrokeredApi } from "./api-broker";
import { isLoopbackRule, type EgressRule, type SandboxLimits } from "./policy";
import type { MeteredUsage } from "./usage-meter";
import { SANDBOX_PATH } from "../agent-command";
import { toolchainPath, type MountedToolchain } from "../environment/toolchains";

/**
 * Starts a command inside an Attempt's sandbox (see bwrap-args.ts for what it holds), joined
 * to the Attempt's cgroup before it runs, as the box's identity, with the egress gateway when the
 * roster allows any host. The handle stops it (SIGTERM to every process of the sandbox, then
 * SIGKILL to the sandbox itself, which takes all of them with it) and releases what it held.
 */

export const EGRESS_INIT = fileURLToPath(new URL("./egress-init.mjs", import.meta.url));
/** The HTTP proxy's port inside the sandbox. */
export const PROXY_PORT = 3128;

/**
 * The loopback ports, inside the sandbox, of `count` brokered APIs: from 3129 on, skipping the
 * ports the roster's loopback rules bridge. The agent's base URL of the i-th API is
 * http://127.0.0.1:<port i>.
 */
export function sandboxApiPorts(count: number, egress: readonly EgressRule[]): number[] {
  const taken = new Set([PROXY_PORT, ...egress.filter(isLoopbackRule).map((r) => r.port)]);
  const ports: number[] = [];
  for (let port = PROXY_PORT + 1; ports.length < count; port++) if (!taken.has(port)) ports.push(port);
  return ports;
}

export interface SandboxSpawn {
  name: string;
  box: AttemptBox;
  /** argv inside the sandbox. */
  command: string[];
  env: Record<string, string>;
  egress: readonly EgressRule[];
  /** APIs whose credential the gateway adds, each reached at its port (sandboxApiPorts). */
  apis?: readonly BrokeredApi[];
  limits: SandboxLimits;
  /** Host paths bound read-only at the same path (a roster's tools outside /usr). */
  readOnlyPaths?: readonly string[];
  /** The repository's toolchains: each bound read-only at its path, its bin first on PATH. */
  toolchains?: readonly MountedToolchain[];
  /** Host files bound read-only into /atelier/bin, by their name there. */
  programs?: Readonly<Record<string, string>>;
  /** The cache's objects, bound read-only at SANDBOX_OBJECTS (the private clone's alternates). */
  objects?: string;
  onRefused?: (refusal: EgressRefusal) => void;
  /** An allowed host could not be reached (egress-proxy.ts). */
  onUnreachable?: (failure: EgressRefusal) => void;
  /** Said once, when something the sandbox should have is missing on this host (cgroups). */
  onNote?: (text: string) => void;
}

export interface SandboxedProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The sandbox's outer process (its pid is also its process group). */
  readonly pid: number;
  readonly watch: ChildWatch;
  /** SIGTERM to the agent's processes, SIGKILL to the whole sandbox once `graceMs` passed. */
  terminate(graceMs: number): Promise<void>;
  /** Kills whatever is left, removes the cgroup, closes the gateway. Call once it exited. */
  dispose(): Promise<void>;
  /** What the brokered APIs' answers said the agent used; null when the sandbox has no gateway. */
  metered(): MeteredUsage | null;
}

/** Where node lives, when it is not under /usr (nvm, /opt): the sandbox needs it for node agents. */
function nodePrefix(): string | null {
  const real = realpathSync(process.execPath);
  return real.startsWith("/usr/") ? null : dirname(dirname(real));
}

function pidNamespace(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/** Every live process of the pid namespace whose init is `initPid`, but the init itself. */
function sandboxMembers(initPid: number): number[] {
  const ns = pidNamespace(initPid);
  if (!ns) return [];
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid !== initPid && pidNamespace(pid) === ns) members.push(pid);
  }
  return members;
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function readInitPid(stream: Readable): Promise<number | null> {
  return new Promise((resolve) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      text += chunk;
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    stream.once("close", () => resolve(null));
    stream.once("error", () => resolve(null));
  });
}

export async function spawnSandboxed(req: SandboxSpawn): Promise<SandboxedProcess> {
  const fds: number[] = [];
  const mounts: Mount[] = [...hostSystemMounts()];
  const bindFd = (hostPath: string, dest: string, writable: boolean) => {
    const fd = openSync(hostPath, "r");
    fds.push(fd);
    mounts.push({ kind: "bind-fd", fd: 3 + fds.length, dest, writable });
  };
  let cgroup: AttemptCgroup | null = null;
  let gateway: EgressGateway | null = null;
  try {
    const prefix = nodePrefix();
    if (prefix) mounts.push({ kind: "ro-bind-try", src: prefix, dest: prefix, over: true });
    for (const path of req.readOnlyPaths ?? []) mounts.push({ kind: "ro-bind-try", src: path, dest: path, over: true });
    for (const t of req.toolchains ?? []) mounts.push({ kind: "ro-bind-try", src: t.source, dest: t.path, over: true });
    if (req.objects) bindFd(req.objects, SANDBOX_OBJECTS, false);
    for (const name of ["passwd", "group", "hosts"]) bindFd(join(req.box.etc, name), `/etc/${name}`, false);
    bindFd(req.box.worktree, SANDBOX_WORKSPACE, true);
    bindFd(req.box.home, SANDBOX_HOME, true);
    bindFd(req.box.tmp, "/tmp", true);
    bindFd(req.box.out, SANDBOX_OUT, true);
    const programs: Record<string, string> = { ...req.programs };
    let command = req.command;
    const env: Record<string, string> = { ...req.env, PATH: toolchainPath(req.toolchains ?? [], req.env.PATH ?? SANDBOX_PATH), HOME: SANDBOX_HOME, TMPDIR: "/tmp", USER: "agent", LOGNAME: "agent" };
    const apis = req.apis ?? [];
    if (req.egress.length > 0 || apis.length > 0) {
      gateway = await startEgressGateway(req.box.run, req.egress, { onRefused: req.onRefused, onUnreachable: req.onUnreachable, apis });
      bindFd(req.box.run, SANDBOX_RUN, false);
      const inside = (socket: string) => `${SANDBOX_RUN}/${basename(socket)}`;
      const bridges = gateway.loopback.map((l) => ({ port: l.port, socket: inside(l.socket) }));
      const apiPorts = sandboxApiPorts(apis.length, req.egress);
      gateway.apis.forEach((socket, i) => bridges.push({ port: apiPorts[i]!, socket: inside(socket) }));
      if (gateway.proxySocket) {
        bridges.push({ port: PROXY_PORT, socket: inside(gateway.proxySocket) });
        const proxy = `http://127.0.0.1:${PROXY_PORT}`;
        Object.assign(env, { HTTPS_PROXY: proxy, HTTP_PROXY: proxy, https_proxy: proxy, http_proxy: proxy });
        // the bridged loopback ports are reached directly, not through the proxy
        env.NO_PROXY = env.no_proxy = "127.0.0.1,localhost,::1";
      }
      env.ATELIER_EGRESS_BRIDGES = JSON.stringify(bridges);
      programs["egress-init.mjs"] = EGRESS_INIT;
      command = [process.execPath, `${SANDBOX_BIN}/egress-init.mjs`, ...command];
    }
    for (const [name, hostPath] of Object.entries(programs)) bindFd(hostPath, `${SANDBOX_BIN}/${name}`, false);

    const made = await createAttemptCgroup(req.name.replace(/[^A-Za-z0-9._-]/g, "_"), req.limits);
    if ("unavailable" in made) req.onNote?.(made.unavailable);
    else cgroup = made;

    const infoFd = 3;
    let argv: string[] = ["bwrap", ...bwrapArgs({ identity: req.box.identity, mounts, cwd: SANDBOX_WORKSPACE, command, infoFd })];
    if (cgroup) {
      // join the cgroup before anything of the agent's runs, so no child escapes its limits
      argv = ["/bin/sh", "-c", 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"', "sh", ...cgroup.procsFiles, "--", ...argv];
    }
    const [file, ...args] = argv as [string, ...string[]];
    const child = spawn(file, args, {
      cwd: "/",
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe", "pipe", ...fds],
    }) as unknown as ChildProcessWithoutNullStreams;
    const watch = watchChild(child);
    for (const fd of fds.splice(0)) closeSync(fd);
    const initPid = readInitPid(child.stdio[3] as Readable);
    const pid = child.pid ?? -1;
    let exited = child.exitCode !== null || child.signalCode !== null;
    child.once("exit", () => (exited = true));
    const ownedCgroup = cgroup;
    const ownedGateway = gateway;
    let disposed = false;

    return {
      child,
      pid,
      watch,
      async terminate(graceMs: number) {
        if (exited) return;
        const init = await Promise.race([initPid, sleep(1_000).then(() => null)]);
        if (init !== null) for (const member of sandboxMembers(init)) kill(member, "SIGTERM");
        else kill(pid, "SIGTERM");
        const deadline = Date.now() + graceMs;
        while (!exited && Date.now() < deadline) await sleep(25);
        if (exited) return;
        kill(pid, "SIGKILL");
        if (init !== null) kill(init, "SIGKILL");
        const killDeadline = Date.now() + 2_000;
        while (!exited && Date.now() < killDeadline) await sleep(25);
      },
      async dispose() {
        if (disposed) return;
        disposed = true;
        await ownedCgroup?.destroy();
        await ownedGateway?.close();
      },
      metered: () => ownedGateway?.metered() ?? null,
    };
  } catch (err) {
    for (const fd of fds) closeSync(fd);
    await cgroup?.destroy();
    await gateway?.close();
    throw err;
  }
}
