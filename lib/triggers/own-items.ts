import type { GitHubApp } from "../github/app-client";
import type { LoopDefinition } from "../loops/config-schema";
import { continuesSameBranch } from "../loops/evaluate";
import type { Db } from "../store/kernel/db";
import { chainDepthOfOpeners, openerOfPullRequest } from "../store/runs/event-actors";
import type { EventActor } from "../store/runs/claim";
import type { ActorFacts } from "./actor";
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

/** The App's slug from its bot login (`<slug>[bot]`): what GitHub names the App by (mentions, check suites). */
export function slugOfBot(botLogin: string | null): string | null {
  return botLogin?.replace(/\[bot\]$/, "") ?? null;
}

/**
 * How many Runs led to the Item: 0 for a person's, the depth of the Run whose pull request it is
 * + 1 for the App's. A Run on the pull request itself (a same-branch continuation) led to nothing.
 */
export async function chainDepth(db: Db, item: Observation, own: boolean): Promise<number> {
  if (!own) return 0;
  // an Item of the App that no Run of this instance opened still came from some Run
  return ((await chainDepthOfOpeners(db, item.repo, item.number)) ?? 0) + 1;
}

/** The Run that opened one of the App's pull requests: the branch it pushed, and who started it. */
export interface PullRequestOrigin {
  branch: string;
  facts: ActorFacts;
}

/**
 * The Run of this instance that opened the pull request (a Run on another Item or a Tick, not a
 * continuation on the pull request itself), when its branch is still the pull request's head;
 * null otherwise (a pull request from an `atelier/*` branch no Run of ours pushed, a fork's).
 */
export async function pullRequestOrigin(db: Db, item: Observation): Promise<PullRequestOrigin | null> {
  const head = item.projection.headRefName;
  if (item.projection.kind !== "pull_request" || !head) return null;
  const opener = await openerOfPullRequest(db, item.repo, item.number, head);
  if (!opener) return null;
  const actor: EventActor = opener.actor ? { ...opener.actor, source: "origin" } : { login: "ghost", permission: "none", source: "origin" };
  return { branch: head, facts: { actor, authorAssociation: opener.authorAssociation } };
}

/**
 * What each Loop continues on one Item, read once: for a same-branch Loop, the origin of the
 * pull request (null: it cannot continue this one, and does not act); undefined for any other Loop.
 */
export function continuationsOf(db: Db, item: Observation): (loop: Pick<LoopDefinition, "continue">) => Promise<PullRequestOrigin | null | undefined> {
  let origin: Promise<PullRequestOrigin | null> | null = null;
  return async (loop) => (continuesSameBranch(loop) ? await (origin ??= pullRequestOrigin(db, item)) : undefined);
}
