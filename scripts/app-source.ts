// Where the GitHub App comes from, for `npm start`: "env" (GITHUB_APP_ID and friends),
// "database" (registered from the dashboard's /setup page, the manifest flow) or "none" (start
// the sandbox simulator). Stored credentials that do not validate stop the start with the reason.
import { settingsFromDatabase } from "../lib/config/github-app";
import { createDb } from "../lib/store/db";

if (process.env.GITHUB_APP_ID) {
  console.log("env");
} else {
  const db = createDb(undefined, 1);
  try {
    console.log((await settingsFromDatabase(db)) ? "database" : "none");
  } catch (err) {
    console.error(`atelier: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  } finally {
    await db.close();
  }
}
