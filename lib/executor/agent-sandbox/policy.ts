/**
 * What a roster entry says about its agent's sandbox: the hosts it may reach and the cgroup
 * limits it runs under. Pure: parsing and matching only.
 */

export interface SandboxLimits {
  /** Memory of the whole sandbox (the agent and every child), in MiB. */
  memoryMb: number;
  /** Processes and threads at once. */
  pids: number;
  /** CPU time as a number of cores (fractions allowed). */
  cpus: number;
  /** The box's disk quota, in MiB (box-quota.ts). */
  diskMb: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({ memoryMb: 4096, pids: 1024, cpus: 2, diskMb: 8192 });

/** One `egress:` entry: a host name (or `*.domain`), with a port or HTTPS's. */
export interface EgressRule {
  host: string;
  /** null: 443 only (plain HTTP's port 80 opens only when a rule names it). */
  port: number | null;
}

const HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Parses `host`, `host:port`, `*.domain` or `[::1]:port`; null when it is none of them. */
export function parseEgressRule(text: string): EgressRule | null {
  const raw = text.trim().toLowerCase();
  let host = raw;
  let port: number | null = null;
  const v6 = /^\[([0-9a-f:]+)\](?::(\d+))?$/.exec(raw);
  if (v6) {
    host = v6[1]!;
    port = v6[2] ? Number(v6[2]) : null;
  } else {
    const colon = raw.lastIndexOf(":");
    if (colon > 0) {
      if (!/^\d+$/.test(raw.slice(colon + 1))) return null;
      port = Number(raw.slice(colon + 1));
      host = raw.slice(0, colon);
    }
    if (!HOST.test(host) && !IPV4.test(host)) return null;
  }
  if (port !== null && (port < 1 || port > 65_535)) return null;
  return { host, port };
}

export function formatEgressRule(rule: EgressRule): string {
  const host = rule.host.includes(":") ? `[${rule.host}]` : rule.host;
  return rule.port === null ? host : `${host}:${rule.port}`;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1"]);

/** A rule for a port on this machine's loopback: bridged into the sandbox at the same port. */
export function isLoopbackRule(rule: EgressRule): rule is EgressRule & { port: number } {
  return rule.port !== null && LOOPBACK_NAMES.has(rule.host);
}

/** Whether `host:port` (as a client asked for it) is allowed by one of the rules. */
export function egressAllows(rules: readonly EgressRule[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return rules.some((rule) => {
    const portOk = (rule.port ?? 443) === port;
    if (!portOk) return false;
    if (rule.host.startsWith("*.")) return h.endsWith(rule.host.slice(1)) && h.length > rule.host.length - 1;
    return rule.host === h;
  });
}
