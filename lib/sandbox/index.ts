import { mkdir, mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GitHubAppSettings } from "../github/app-settings";
import { SimControl } from "./control";
import { SimCore } from "./core";
import { holdUntilReceiverListens } from "./receiver-wait";
import { seedDemo } from "./seed";
import { restoreState, StateFile } from "./state-file";
import { createSimServer } from "./server";
import type { SimState } from "./state/sim-state";

export interface SimulatorOptions {
  /** 0 (default) = a random free port. */
  port?: number;
  host?: "127.0.0.1";
  /** Where the App's webhooks go (also settable later with setWebhookUrl). */
  webhookUrl?: string;
  seed?: "demo" | "none";
  /** Where the bare git repositories live; default a temp dir removed by close(). */
  dataDir?: string;
  /**
   * Keep the state in `<dataDir>/state.json` across restarts (`npm start`): a simulator that
   * finds it continues that world (and does not seed); one that does not starts afresh.
   */
  persist?: boolean;
  log?: boolean;
  /** Hold deliveries until the webhook URL answers (`npm start`: the dashboard starts after). */
  holdWebhooksUntilReceiverListens?: boolean;
}

export interface SimAppCredentials {
  id: number;
  slug: string;
  privateKey: string;
  webhookSecret: string;
  clientId: string;
  clientSecret: string;
}

/**
 * A running GitHub simulator: `url` is both the REST/GraphQL base URL (Octokit's `baseUrl`)
 * and the web root (OAuth, manifest, git, `/_sim`). The control methods are inherited from
 * SimControl.
 */
export class Simulator extends SimControl {
  constructor(
    core: SimCore,
    readonly url: string,
    private readonly shutdown: () => Promise<void>,
    /** Whether this simulator continues the world a previous one kept (`persist`). */
    readonly restored: boolean,
  ) {
    super(core);
  }

  get app(): SimAppCredentials {
    const app = this.core.state.app;
    return { id: app.id, slug: app.slug, privateKey: app.privateKey, webhookSecret: app.webhookSecret, clientId: app.clientId, clientSecret: app.clientSecret };
  }

  get state(): SimState {
    return this.core.state;
  }

  /** Atelier's settings for the simulator's App, as the sandbox file would give them. */
  appSettings(): GitHubAppSettings {
    const app = this.app;
    return {
      appId: app.id,
      privateKey: app.privateKey,
      webhookSecret: app.webhookSecret,
      baseUrl: this.url,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      webUrl: this.url,
      source: "sandbox-file",
    };
  }

  /** The clone URL of a repository ("owner/name"). */
  cloneUrl(fullName: string): string {
    return `${this.url}/${fullName}.git`;
  }

  close(): Promise<void> {
    return this.shutdown();
  }
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const ownsDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), "atelier-sim-")));
  const core = new SimCore(dataDir, opts.log ?? false);
  const statePath = join(dataDir, "state.json");
  const restored = opts.persist === true && restoreState(statePath, core.state, core.clock);
  // a fresh world starts with no repository of an earlier one
  if (!restored) await rm(join(dataDir, "repos"), { recursive: true, force: true });
  await mkdir(join(dataDir, "repos"), { recursive: true });
  if (opts.webhookUrl) core.state.app.webhookUrl = opts.webhookUrl;
  const stopHolding = opts.holdWebhooksUntilReceiverListens ? holdUntilReceiverListens(core.webhooks, () => core.state.app.webhookUrl) : () => undefined;
  const control = new SimControl(core);
  const server = createSimServer(core, control);
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const stateFile = opts.persist ? new StateFile(statePath, core.state, core.clock) : null;
  if (stateFile) {
    core.state.onEvent(() => stateFile.changed());
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== "GET" && req.method !== "HEAD") res.once("finish", () => stateFile.changed());
    });
  }
  core.baseUrl = `http://${host}:${port}`;
  let closed = false;
  const shutdown = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    stopHolding();
    stateFile?.flush();
    await core.webhooks.idle();
    await core.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (ownsDir) await rm(dataDir, { recursive: true, force: true });
  };
  const simulator = new Simulator(core, core.baseUrl, shutdown, restored);
  if (opts.seed === "demo" && !restored) await seedDemo(simulator);
  stateFile?.flush();
  return simulator;
}

export { seedDemo } from "./seed";
export { signAppJwt } from "./jwt";
export { SimControl } from "./control";
export type { Delivery } from "./webhooks";
export type { CounterSnapshot } from "./counters";
export type { FailNextInput } from "./faults";
