import { Probot, ProbotOctokit } from "probot";
import type { Simulator } from "../../../lib/sandbox/index";

type OctokitOptions = ConstructorParameters<typeof ProbotOctokit>[0] & { throttle?: Record<string, unknown> };

class UnthrottledOctokit extends ProbotOctokit {
  constructor(options: OctokitOptions = {}) {
    super({ ...options, throttle: { ...options.throttle, enabled: false } });
  }
}

/**
 * A real Probot pointed at the simulator, as Atelier's web process builds it — without the
 * throttling plugin, whose one-write-per-second pacing would only slow the tests down.
 */
export function probotFor(sim: Simulator): Probot {
  return new Probot({
    Octokit: UnthrottledOctokit,
    appId: sim.app.id,
    privateKey: sim.app.privateKey,
    secret: sim.app.webhookSecret,
    baseUrl: sim.url,
    logLevel: "fatal",
  });
}

/** The demo installation's id. */
export function demoInstallationId(sim: Simulator): number {
  const installation = [...sim.state.installations.values()][0];
  if (!installation) throw new Error("no installation: seed the demo first");
  return installation.id;
}

export async function api(sim: Simulator, path: string, init: RequestInit & { token?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set("authorization", `token ${init.token}`);
  if (init.body && !headers.has("content-type")) headers.set("content-type", "application/json");
  return fetch(`${sim.url}${path}`, { ...init, headers });
}
