import type { IncomingHttpHeaders } from "node:http";

/**
 * Who may drive the simulator's control page and API (`/_sim…`): only a request addressed to
 * the simulator itself — a `Host` of its own port on loopback (localhost, 127.0.0.1, [::1]),
 * so that a web page whose name was re-pointed at 127.0.0.1 (DNS rebinding) reads and changes
 * nothing — and, for anything but a read, not sent by another site (`Sec-Fetch-Site`,
 * `Origin`). The simulator's own pages and a program (curl, the tests) pass. Null: allowed.
 */
export function controlRefusal(method: string, headers: IncomingHttpHeaders, baseUrl: string): string | null {
  const port = new URL(baseUrl).port;
  const own = new Set([...["localhost", "127.0.0.1", "[::1]"].map((host) => `${host}:${port}`), new URL(baseUrl).host]);
  const host = (headers.host ?? "").toLowerCase();
  if (!own.has(host)) return `the simulator's control API answers only requests addressed to it (Host ${[...own].join(", ")}), not ${JSON.stringify(host)}`;
  if (method === "GET" || method === "HEAD") return null;
  const site = headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") return `the simulator's control API refuses ${site} requests: use its own page or a program`;
  const origin = headers.origin;
  if (origin !== undefined && origin !== "null" && !own.has(safeHost(origin))) return `the simulator's control API refuses requests sent from ${origin}`;
  if (origin === "null") return "the simulator's control API refuses requests sent from an opaque origin";
  return null;
}

function safeHost(origin: string): string {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return "";
  }
}
