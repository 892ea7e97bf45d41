/**
 * `npm run sim`: the GitHub simulator alone, seeded with the demo world.
 * SIM_PORT (default 3001) picks the port; SIM_APP_FILE, when set, receives the App's
 * credentials as JSON (the private key goes only there, never to the terminal);
 * SIM_WEBHOOK_URL points the App's webhook somewhere (deliveries wait until it listens);
 * SIM_DATA_DIR, when set, keeps the simulated GitHub there (its git repositories and
 * state.json) across restarts — `npm start` sets it to .atelier/sandbox.
 */
import { writeSandboxAppFile } from "../lib/sandbox/app-file";
import { startSimulator } from "../lib/sandbox/index";

const port = Number(process.env.SIM_PORT ?? 3001);
const dataDir = process.env.SIM_DATA_DIR;
const sim = await startSimulator({
  port,
  seed: "demo",
  log: true,
  ...(dataDir ? { dataDir, persist: true } : {}),
  // the receiver (the dashboard) starts after the simulator: its deliveries wait for it
  ...(process.env.SIM_WEBHOOK_URL ? { webhookUrl: process.env.SIM_WEBHOOK_URL, holdWebhooksUntilReceiverListens: true } : {}),
});

console.log(`GitHub simulator on ${sim.url}`);
if (dataDir) console.log(sim.restored ? `  continuing the simulated GitHub kept in ${dataDir}` : `  a new simulated GitHub (the demo world), kept in ${dataDir}`);
console.log(`  REST/GraphQL base URL: ${sim.url}   control page: ${sim.url}/_sim`);
console.log(`  App id ${sim.app.id} (${sim.app.slug}), client id ${sim.app.clientId}`);
const appFile = process.env.SIM_APP_FILE;
if (appFile) {
  await writeSandboxAppFile(sim, appFile);
  console.log(`  App credentials written to ${appFile}`);
} else {
  console.log("  Set SIM_APP_FILE=<path> to receive the App's credentials (private key, secrets) as JSON.");
}

const stop = (): void => {
  void sim.close().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
