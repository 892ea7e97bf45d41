import { afterAll, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { freePort } from "../support/free-port";
import { startReceiver } from "./support/receiver";

let sim: Simulator | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

async function until(what: string, probe: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it("under npm start the demo world's webhooks wait for the receiver to listen, then all arrive, none failed", async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api/github/webhooks`;
  sim = await startSimulator({ seed: "demo", webhookUrl: url, holdWebhooksUntilReceiverListens: true });
  const queued = sim.deliveries();
  expect(queued.length).toBeGreaterThan(5);
  // nothing listens yet: the simulator keeps asking and keeps every delivery queued
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(sim.deliveries().map((d) => d.status)).toEqual(queued.map(() => "queued"));

  receiver = await startReceiver(port);
  await until("every delivery is sent", () => sim!.deliveries().every((d) => d.status !== "queued"));
  expect(sim.deliveries().filter((d) => d.status !== "delivered")).toEqual([]);
  // each once; overlapping as GitHub sends them (ADR 0077), so not necessarily in the order they were made
  expect(receiver.received.map((r) => r.delivery).sort()).toEqual(queued.map((d) => d.id).sort());
  expect(receiver.received[0]).toMatchObject({ event: "installation", action: "created" });

  // from then on a receiver that fails is a failed delivery, as on GitHub
  receiver.status = 500;
  sim.createIssue({ repo: "demo-org/webapp", title: "After the start" });
  await sim.waitForWebhooks();
  expect(sim.deliveries().at(-1)).toMatchObject({ status: "failed", statusCode: 500 });
});
