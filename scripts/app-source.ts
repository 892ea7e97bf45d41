// What `npm start` runs against (lib/setup/start-decision.ts): "env" (GITHUB_APP_ID and
// friends), "database" (registered from the dashboard's /setup page, the manifest flow),
// "sandbox" (start the simulator) or "setup" (no App yet: the dashboard only, to register one).
// Stored credentials that do not validate, or an instance that is not local with no App, stop
// the start with the reason (exit 1).
import { settingsFromDatabase } from "../lib/github/app-settings";
import { startDecision, type AppSource } from "../lib/setup/start-decision";
import { createDb } from "../lib/store/kernel/db";

async function appSource(): Promise<AppSource> {
  if (process.env.GITHUB_APP_ID) return "env";
  const db = createDb(undefined, 1);
  try {
    return (await settingsFromDatabase(db)) ? "database" : "none";
  } finally {
    await db.close();
  }
}

try {
  const decision = startDecision(await appSource());
  if ("refuse" in decision) {
    console.error(decision.refuse);
    process.exitCode = 1;
  } else {
    console.log(decision.run);
  }
} catch (err) {
  console.error(`atelier: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
