import { lstatSync, readlinkSync } from "node:fs";

/**
 * The bubblewrap command line of an agent's sandbox. Pure but for `hostSystemMounts`, which
 * looks at how this host lays out its system directories once.
 *
 * What the sandbox holds: the system directories read-only (/usr and the /bin, /lib… links or
 * directories), a short allowlist of /etc (certificates, the loader's cache, time zone) and
 * made-up passwd/group/hosts files, a fresh /proc of its own pid namespace, a minimal /dev,
 * and the Attempt's own directories passed as open file descriptors. Every namespace but the
 * user one is new (pid, mount, ipc, network, uts, cgroup), and the agent dies with its parent.
 *
 * Two ways in, by who the worker is:
 *  - root: bubblewrap runs privileged (no user namespace) and keeps only CAP_SETUID/SETGID for
 *    `setpriv`, which switches to the Attempt's own uid with no capability left, an empty
 *    bounding set and no_new_privs before the agent's command runs;
 *  - anyone else: bubblewrap runs unprivileged in a new user namespace, as uid 1000 inside
 *    (the worker's uid outside), and the agent cannot make further user namespaces.
 */

export const SANDBOX_UID = 1000;
export const SANDBOX_HOME = "/home/agent";
export const SANDBOX_WORKSPACE = "/workspace";
export const SANDBOX_OUT = "/atelier/out";
export const SANDBOX_RUN = "/atelier/run";
export const SANDBOX_BIN = "/atelier/bin";
/** Where a private clone's borrowed objects are, inside the sandbox. */
export const SANDBOX_OBJECTS = "/atelier/objects";

/** /etc entries an agent's tools need (TLS roots, the dynamic loader, time zone, resolver rules). */
const ETC_ALLOWLIST = [
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/pki",
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/mime.types",
];

const TOP_LEVEL_LINKS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

export type Mount =
  /** `over`: bound after the Attempt's own directories, so a path under /tmp stays visible above its private /tmp. */
  | { kind: "ro-bind-try"; src: string; dest: string; over?: boolean }
  | { kind: "symlink"; target: string; link: string }
  | { kind: "bind-fd"; fd: number; dest: string; writable: boolean };

let systemMounts: Mount[] | null = null;

/** /usr and the top-level system links or directories, as this host has them. */
export function hostSystemMounts(): Mount[] {
  if (systemMounts) return systemMounts;
  const mounts: Mount[] = [{ kind: "ro-bind-try", src: "/usr", dest: "/usr" }];
  for (const path of TOP_LEVEL_LINKS) {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) mounts.push({ kind: "symlink", target: readlinkSync(path), link: path });
      else if (info.isDirectory()) mounts.push({ kind: "ro-bind-try", src: path, dest: path });
    } catch {
      // not on this host
    }
  }
  for (const path of ETC_ALLOWLIST) mounts.push({ kind: "ro-bind-try", src: path, dest: path });
  systemMounts = mounts;
  return mounts;
}

/** Who the agent is: the Attempt's own host uid (the worker is root), or the worker's uid in a user namespace. */
export type SandboxIdentity = { privileged: true; uid: number } | { privileged: false };

/** The uid the agent has inside its sandbox. */
export const insideUid = (identity: SandboxIdentity): number => (identity.privileged ? identity.uid : SANDBOX_UID);

export interface BwrapPlan {
  identity: SandboxIdentity;
  mounts: Mount[];
  /** The sandbox's working directory. */
  cwd: string;
  /** argv inside the sandbox. */
  command: string[];
  /** Where bwrap writes {"child-pid": N} once the sandbox's init runs. */
  infoFd?: number;
}

export function bwrapArgs(plan: BwrapPlan): string[] {
  const args = ["--die-with-parent", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
  if (plan.identity.privileged) args.push("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID");
  else args.push("--unshare-user", "--disable-userns", "--uid", String(SANDBOX_UID), "--gid", String(SANDBOX_UID));
  args.push("--hostname", "atelier-agent");
  // the directories that hold mount points must be traversable by the agent (bubblewrap makes them 0700 as root)
  const made = new Set<string>();
  const parents = (dest: string) => {
    const parts = dest.split("/").filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = `/${parts.slice(0, i).join("/")}`;
      if (made.has(dir)) continue;
      made.add(dir);
      args.push("--perms", "0755", "--dir", dir);
    }
  };
  const roBind = (m: Extract<Mount, { kind: "ro-bind-try" }>) => {
    parents(m.dest);
    args.push("--ro-bind-try", m.src, m.dest);
  };
  for (const m of plan.mounts) {
    if (m.kind === "ro-bind-try" && !m.over) roBind(m);
    else if (m.kind === "symlink") args.push("--symlink", m.target, m.link);
  }
  args.push("--proc", "/proc", "--dev", "/dev");
  // bound after /proc and /dev, so a descriptor mount may sit below a made-up directory
  for (const m of plan.mounts) {
    if (m.kind !== "bind-fd") continue;
    parents(m.dest);
    args.push(m.writable ? "--bind-fd" : "--ro-bind-fd", String(m.fd), m.dest);
  }
  for (const m of plan.mounts) if (m.kind === "ro-bind-try" && m.over) roBind(m);
  if (plan.infoFd !== undefined) args.push("--info-fd", String(plan.infoFd));
  args.push("--chdir", plan.cwd, "--");
  if (plan.identity.privileged) {
    const id = String(plan.identity.uid);
    args.push("setpriv", "--reuid", id, "--regid", id, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--");
  }
  args.push(...plan.command);
  return args;
}
