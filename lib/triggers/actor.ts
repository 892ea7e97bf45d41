import { roleOfPermissionAnswer, type RepoRole } from "../github/github-user-api";
import type { Octokit } from "../github/app-client";
import { httpStatusOf } from "../github/rate-limit-errors";
import { getListedItem } from "../github/issues-listing";
import { splitRepo } from "../github/repo-name";
import { ACTOR_EVENT_NAMES, type BodyEdit, type TimelineEvent } from "../loops/timeline-events";
import { REPO_ROLES, type LoopDefinition } from "../loops/config-schema";
import { lastBoardMover } from "../store/people/audit-log";
import type { Db } from "../store/kernel/db";
import type { ApprovalReason, EventActor } from "../store/runs/claim";
import type { ItemChanges, Observation } from "./observe-item";
import type { RegisteredRepository } from "../store/github/repository-rows";

/**
 * Who caused a match, and what GitHub lets them do (ADR 0009, 0050). The candidates:
 * - the senders of the webhooks that hinted the Item (labeled, opened, edited: every Hint the
 *   queued one absorbed);
 * - the body's last editor (GraphQL), when the edit came after the latest timeline event;
 * - the actor of the Item's latest timeline event (timeline-events.ts), which is what a poll
 *   finds: labels, renames, closes and reopens each carry their actor. Read in the Item's own
 *   GraphQL selection (a pull request's poll read, or a batched read of the issue), and by
 *   REST (GET /repos/{o}/{r}/issues/{n}/events) only when GraphQL cannot tell;
 * - the Item's author, when there is no timeline event (it was opened matching) or when the
 *   Item changed after its latest event (a body edit has no event: only its author, or a
 *   writer, can make it).
 * The weakest of them is the Event's actor: a writer's label does not launder a later edit.
 */

export interface ActorFacts {
  actor: EventActor;
  /** GitHub's author_association of the Item (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE…) */
  authorAssociation: string | null;
}

/** A change newer than the latest timeline event by more than this has no event of its own. */
const UNEXPLAINED_CHANGE_MS = 2_000;
const MAX_EVENT_PAGES = 10;
/** How long before the App's label a Board move may have asked for it (an interval). */
const BOARD_MOVE_WINDOW = "10 minutes";

/** What the lookup needs besides GitHub: the ledger of Board moves, and the App's bot login. */
export interface ActorLookup {
  db: Db;
  botLogin: string | null;
  /**
   * Roles already asked during one poll cycle (repository|login → role): the Items of a cycle
   * caused by one person ask GitHub once. Never kept past the cycle.
   */
  roles?: Map<string, Promise<RepoRole>>;
  /**
   * Who changed the Item by GraphQL (its latest timeline event, its body's last edit), for an
   * observation that did not carry it (an issue from the REST listing); each part undefined when
   * GraphQL cannot tell.
   */
  changes?: (item: Observation) => Promise<ItemChanges | undefined>;
  /** A person's role by GraphQL (batched): undefined when only REST can tell. */
  roleByGraphql?: (fullName: string, login: string) => Promise<RepoRole | undefined>;
}

/**
 * Reads the candidates on GitHub and returns the weakest, with its role. The App's bot is no
 * person: its label counts as the person's who moved the card on the Board just before
 * (audited), else as the bot's own (no role: an agent's label starts nothing alone).
 */
export async function resolveActor(
  octokit: Octokit,
  repo: Pick<RegisteredRepository, "fullName">,
  item: Observation,
  senders: readonly string[],
  lookup: ActorLookup,
): Promise<ActorFacts> {
  // the read that produced the observation carried author_association (a listing, GraphQL): no GET
  const [listed, latest, edit] = await Promise.all([
    item.authorAssociation === undefined ? getListedItem(octokit, repo.fullName, item.number) : null,
    latestEventOf(octokit, repo, item, lookup),
    bodyEditOf(item, lookup),
  ]);
  const author = item.projection.author;
  const isBot = (login: string) => lookup.botLogin !== null && login.toLowerCase() === lookup.botLogin.toLowerCase();
  const candidates: { login: string; source: EventActor["source"] }[] = [];
  const mover = latest && isBot(latest.login) ? await lastBoardMover(lookup.db, item.repo, item.number, latest.createdAt, BOARD_MOVE_WINDOW) : null;
  for (const sender of new Set(senders)) if (!(mover && isBot(sender))) candidates.push({ login: sender, source: "webhook" });
  if (mover) candidates.push({ login: mover, source: "board" });
  else if (latest) candidates.push({ login: latest.login, source: "timeline" });
  const updatedAt = Date.parse(listed?.updated_at ?? item.projection.updatedAt);
  const unexplained = !latest || updatedAt - Date.parse(latest.createdAt) > UNEXPLAINED_CHANGE_MS;
  if (author && (unexplained || candidates.length === 0)) candidates.push({ login: author, source: "author" });
  // a body edit has no event: its editor counts when it came after the latest event, however soon
  if (edit && !isBot(edit.login) && (!latest || Date.parse(edit.editedAt) >= Date.parse(latest.createdAt))) candidates.push({ login: edit.login, source: "editor" });

  const weakest = await weakestCandidate(octokit, repo, candidates, lookup);
  const association = item.authorAssociation !== undefined ? item.authorAssociation : (listed as { author_association?: unknown } | null)?.author_association;
  const authorAssociation = typeof association === "string" ? association : null;
  return { actor: weakest ?? { login: "ghost", permission: "none", source: "author" }, authorAssociation };
}

/** The weakest of the candidates by the role GitHub reports for each (asked once per person and cycle); null for none. */
async function weakestCandidate(octokit: Octokit, repo: Pick<RegisteredRepository, "fullName">, candidates: readonly { login: string; source: EventActor["source"] }[], lookup: ActorLookup): Promise<EventActor | null> {
  let weakest: EventActor | null = null;
  const roles = lookup.roles ?? new Map<string, Promise<RepoRole>>();
  for (const c of candidates) {
    const permission = await cachedRole(octokit, repo.fullName, c.login, { ...lookup, roles });
    if (!weakest || roleRank(permission) < roleRank(weakest.permission)) weakest = { login: c.login, permission, source: c.source };
  }
  return weakest;
}

/**
 * The weaker of an Event's actor (its Item's, or a continuation's origin) and the people whose
 * text is new since the Loop's last Event (authored-texts.ts): on a tie the actor stays. The
 * App's bot is left out (its texts are a Run's, whose chain depth is counted), and so is a
 * deleted author (null).
 */
export async function weakestWithAuthors(
  octokit: Octokit,
  repo: Pick<RegisteredRepository, "fullName">,
  facts: ActorFacts,
  authors: readonly (string | null)[],
  lookup: ActorLookup,
): Promise<ActorFacts> {
  const isBot = (login: string) => lookup.botLogin !== null && login.toLowerCase() === lookup.botLogin.toLowerCase();
  const logins = [...new Set(authors.filter((a): a is string => !!a && !isBot(a) && a.toLowerCase() !== facts.actor.login.toLowerCase()))];
  const weakest = await weakestCandidate(octokit, repo, logins.map((login) => ({ login, source: "text" as const })), lookup);
  return weakest && roleRank(weakest.permission) < roleRank(facts.actor.permission) ? { ...facts, actor: weakest } : facts;
}

/** A person's role on the repository, asked once per lookup (its `roles`, when it has them). */
export function cachedRole(octokit: Octokit, fullName: string, login: string, lookup: Pick<ActorLookup, "roles" | "roleByGraphql">): Promise<RepoRole> {
  const roles = lookup.roles;
  if (!roles) return roleOf(octokit, fullName, login, lookup);
  const key = `${fullName.toLowerCase()}|${login.toLowerCase()}`;
  if (!roles.has(key)) roles.set(key, roleOf(octokit, fullName, login, lookup));
  return roles.get(key)!;
}

/** The role GitHub reports, by GraphQL when it can tell, else by REST. */
async function roleOf(octokit: Octokit, fullName: string, login: string, lookup: Pick<ActorLookup, "roleByGraphql">): Promise<RepoRole> {
  return (await lookup.roleByGraphql?.(fullName, login)) ?? repositoryRoleOf(octokit, fullName, login);
}

/** The role GitHub reports for `login` on the repository; "none" for a bot, a deleted user or a 404. */
export async function repositoryRoleOf(octokit: Octokit, fullName: string, login: string): Promise<RepoRole> {
  const { owner, repo } = splitRepo(fullName);
  try {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/collaborators/{username}/permission", { owner, repo, username: login });
    return roleOfPermissionAnswer(data);
  } catch (err) {
    const status = httpStatusOf(err)?.status;
    if (status === 404 || status === 403 || status === 422) return "none";
    throw err;
  }
}

/** The Item's latest timeline event with an actor: from its GraphQL read when it can tell, else by REST. */
async function latestEventOf(octokit: Octokit, repo: Pick<RegisteredRepository, "fullName">, item: Observation, lookup: ActorLookup): Promise<TimelineEvent | null> {
  const known = item.latestEvent !== undefined ? item.latestEvent : (await lookup.changes?.(item))?.latestEvent;
  return known !== undefined ? known : latestRestEvent(octokit, repo.fullName, item.number);
}

/** Who last edited the Item's body, from its GraphQL read (REST does not say): null when no one did or GraphQL cannot tell. */
export async function bodyEditOf(item: Observation, lookup: Pick<ActorLookup, "changes">): Promise<BodyEdit | null> {
  const known = item.bodyEdit !== undefined ? item.bodyEdit : (await lookup.changes?.(item))?.bodyEdit;
  return known ?? null;
}

/** The newest event of ACTOR_EVENT_NAMES with an actor in the Item's REST events, or null. */
async function latestRestEvent(octokit: Octokit, fullName: string, number: number): Promise<TimelineEvent | null> {
  const { owner, repo } = splitRepo(fullName);
  let latest: TimelineEvent | null = null;
  let pages = 0;
  for await (const page of octokit.paginate.iterator("GET /repos/{owner}/{repo}/issues/{issue_number}/events", { owner, repo, issue_number: number, per_page: 100 })) {
    for (const event of page.data) {
      const login = event.actor?.login;
      if (login && ACTOR_EVENT_NAMES.has(event.event) && (!latest || Date.parse(event.created_at) >= Date.parse(latest.createdAt))) latest = { login, createdAt: event.created_at };
    }
    if (++pages >= MAX_EVENT_PAGES) break;
  }
  return latest;
}

/** A role's rank, weakest first (none 0 … admin 5). */
export const roleRank = (role: string): number => Math.max(0, (REPO_ROLES as readonly string[]).indexOf(role));

/**
 * Whether the Run waits for a person, and why beyond the Loop's `approval: required`: an actor
 * weaker than the Loop's `trigger_permission` (default write), or a public repository whose
 * config does not say `approval:` at all.
 */
export function approvalFor(
  loop: Pick<LoopDefinition, "approval" | "approvalGiven" | "triggerPermission">,
  repo: Pick<RegisteredRepository, "private">,
  actor: EventActor | null,
): { approvalRequired: boolean; approvalReason: ApprovalReason | null } {
  const needs = loop.triggerPermission ?? "write";
  if (actor && roleRank(actor.permission) < roleRank(needs)) {
    return { approvalRequired: true, approvalReason: { token: "actor_cannot_write", login: actor.login, permission: actor.permission, needs } };
  }
  if (loop.approval === "required") return { approvalRequired: true, approvalReason: null };
  if (!loop.approvalGiven && !repo.private) return { approvalRequired: true, approvalReason: { token: "public_repository" } };
  return { approvalRequired: false, approvalReason: null };
}

/** What Needs you and the check run say of a Run waiting for approval. */
export function approvalSentence(loop: string, reason: ApprovalReason | null | undefined): string {
  if (reason?.token === "actor_cannot_write") {
    return `Started by ${reason.login}, who cannot write (${reason.permission === "none" ? "no access" : `${reason.permission} access`}; the Loop ${loop} needs ${reason.needs}) — approve?`;
  }
  if (reason?.token === "public_repository") {
    return `The Loop ${loop} runs on a public repository without approval: set, so each Run waits for a writer's approval — approve?`;
  }
  return `The Loop ${loop} waits for an approval before its agent starts.`;
}
