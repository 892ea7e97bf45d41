import type { GitHubApp } from "../github/app";
import type { Db } from "../store/db";
import type { Observation } from "./observe-item";

/**
 * The App's own work (THREATS.md attack 12): Items its bot authored and pull requests from its
 * `atelier/*` branches never match a Loop that does not say `allow_bot_items: true`; one that
 * does carries the chain depth of the Runs that led to it, and is refused past the Loop's
 * `max_chain_depth` (default 1): one person's Item opens at most one Run on the App's Item.
 */

const botLogins = new WeakMap<GitHubApp, Promise<string | null>>();

/** The App's bot login (`<slug>[bot]`), read once per App from GET /app; null when GitHub does not say. */
export function appBotLogin(github: GitHubApp): Promise<string | null> {
  let login = botLogins.get(github);
  if (!login) {
    login = github
      .appOctokit()
      .then((octokit) => octokit.request("GET /app"))
      .then(({ data }) => (data?.slug ? `${data.slug}[bot]` : null))
      .catch((err: unknown) => {
        github.log.warn({ err: String(err) }, "could not read the App's slug; its bot's Items are known by their atelier/* branch only");
        botLogins.delete(github);
        return null;
      });
    botLogins.set(github, login);
  }
  return login;
}

/** How many Runs led to the Item: 0 for a person's, the depth of the Run whose pull request it is + 1 for the App's. */
export async function chainDepth(db: Db, item: Observation, own: boolean): Promise<number> {
  if (!own) return 0;
  const { rows } = await db.pool.query<{ depth: number }>(
    `SELECT COALESCE((e.submission->>'chainDepth')::int, 0) AS depth
       FROM runs r JOIN events e ON e.id = r.event_id
      WHERE r.repo = $1 AND r.pull_request_number = $2
      ORDER BY depth DESC LIMIT 1`,
    [item.repo, item.number],
  );
  // an Item of the App that no Run of this instance opened still came from some Run
  return (rows[0]?.depth ?? 0) + 1;
}
