import { createHmac, randomUUID } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import { isoSeconds, type SimClock } from "./sim-clock";
import type { WebhookMessage } from "./webhook-messages";

export type DeliveryStatus = "queued" | "delivered" | "failed" | "dropped" | "no-url";

export interface Delivery {
  /** The X-GitHub-Delivery GUID (the same on a redelivery). */
  id: string;
  /** Position in the log. */
  seq: number;
  event: string;
  action: string;
  installationId: number;
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  redelivery: boolean;
  url: string | null;
  queuedAt: string;
  deliveredAt: string | null;
  durationMs: number | null;
  payload: Record<string, unknown>;
}

export const HOOK_ID = 424242;
const TIMEOUT_MS = 10_000;
/** Deliveries in flight at once by default: GitHub does not wait for one delivery's answer to send the next. */
export const DEFAULT_CONCURRENCY = 8;

/**
 * The App's one webhook: deliveries are sent one at a time, in order (or several at once,
 * overlapping, as GitHub may), never retried (like GitHub); each is logged. The control API
 * drops the next ones, redelivers one by id, pauses.
 */
export class WebhookDispatcher {
  readonly log: Delivery[] = [];
  private queue: Delivery[] = [];
  private dropNext = 0;
  private paused = false;
  private pumping = false;
  private concurrency = DEFAULT_CONCURRENCY;
  private mostInFlight = 0;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly clock: SimClock,
    private readonly app: () => { id: number; webhookSecret: string; webhookUrl: string | null },
    private readonly logLine: (line: string) => void,
  ) {}

  enqueue(message: WebhookMessage): Delivery {
    const delivery = this.record({
      id: randomUUID(),
      event: message.event,
      action: message.action,
      installationId: message.installation.id,
      redelivery: false,
      payload: message.payload,
    });
    if (this.dropNext > 0) {
      this.dropNext -= 1;
      delivery.status = "dropped";
      this.logLine(`webhook ${delivery.event}.${delivery.action} ${delivery.id} dropped (simulated loss)`);
      return delivery;
    }
    this.queue.push(delivery);
    void this.pump();
    return delivery;
  }

  private record(input: Pick<Delivery, "id" | "event" | "action" | "installationId" | "redelivery" | "payload">): Delivery {
    const delivery: Delivery = {
      ...input,
      seq: this.log.length + 1,
      status: "queued",
      statusCode: null,
      error: null,
      url: this.app().webhookUrl,
      queuedAt: isoSeconds(this.clock.now()),
      deliveredAt: null,
      durationMs: null,
    };
    this.log.push(delivery);
    return delivery;
  }

  /** The next `count` deliveries are lost: logged as dropped, never sent. */
  drop(count = 1): void {
    this.dropNext += count;
  }

  /** Sends a logged delivery again with the same X-GitHub-Delivery. */
  redeliver(id: string): Delivery {
    const original = this.log.find((d) => d.id === id);
    if (!original) throw new Error(`no webhook delivery ${id}`);
    const delivery = this.record({ ...original, redelivery: true });
    this.queue.push(delivery);
    void this.pump();
    return delivery;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    void this.pump();
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Resolves once nothing is queued or in flight (or delivery is paused). */
  idle(): Promise<void> {
    if (!this.pumping && (this.queue.length === 0 || this.paused)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Up to `count` deliveries in flight at once (default DEFAULT_CONCURRENCY, as GitHub sends
   * them: related events — labeled, then edited — overlap and may arrive in either order; 1
   * sends them one at a time, in order).
   */
  setConcurrency(count: number): void {
    if (!Number.isInteger(count) || count < 1) throw new Error(`setWebhookConcurrency wants a positive integer, got ${String(count)}`);
    this.concurrency = count;
    void this.pump();
  }

  /** The most deliveries that were in flight together since the simulator started. */
  get maxInFlight(): number {
    return this.mostInFlight;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    const inFlight = new Set<Promise<void>>();
    try {
      while (!this.paused && (this.queue.length > 0 || inFlight.size > 0)) {
        while (!this.paused && this.queue.length > 0 && inFlight.size < this.concurrency) {
          const sending: Promise<void> = this.send(this.queue.shift()!).finally(() => inFlight.delete(sending));
          inFlight.add(sending);
          this.mostInFlight = Math.max(this.mostInFlight, inFlight.size);
        }
        if (inFlight.size > 0) await Promise.race(inFlight);
      }
    } finally {
      this.pumping = false;
      const waiters = this.waiters;
      this.waiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async send(delivery: Delivery): Promise<void> {
    const app = this.app();
    delivery.url = app.webhookUrl;
    if (!app.webhookUrl) {
      delivery.status = "no-url";
      return;
    }
    const body = JSON.stringify(delivery.payload);
    const started = Date.now();
    try {
      const response = await fetch(app.webhookUrl, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "user-agent": "GitHub-Hookshot/sim",
          "x-github-event": delivery.event,
          "x-github-delivery": delivery.id,
          "x-github-hook-id": String(HOOK_ID),
          "x-github-hook-installation-target-type": "integration",
          "x-github-hook-installation-target-id": String(app.id),
          "x-hub-signature": `sha1=${createHmac("sha1", app.webhookSecret).update(body).digest("hex")}`,
          "x-hub-signature-256": await sign(app.webhookSecret, body),
        },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      await response.arrayBuffer().catch(() => undefined);
      delivery.statusCode = response.status;
      delivery.status = response.ok ? "delivered" : "failed";
    } catch (error) {
      delivery.status = "failed";
      delivery.error = error instanceof Error ? error.message : String(error);
    }
    delivery.durationMs = Date.now() - started;
    delivery.deliveredAt = isoSeconds(this.clock.now());
    this.logLine(`webhook ${delivery.event}.${delivery.action} ${delivery.id} → ${delivery.statusCode ?? delivery.error}`);
  }
}
