import { z } from "zod";
import { RUN_STATES } from "../engine/run-state";

/**
 * The API's inputs. Bodies are strict: an unknown field is a 400 `invalid_body`, never
 * silently dropped. Route handlers parse with these before anything else.
 */

const repo = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,38}\/[a-z0-9._-]{1,100}$/i, "a repository is owner/name")
  .transform((s) => s.toLowerCase());

const loopName = z.string().regex(/^[a-z0-9][a-z0-9-_]{0,62}$/i, "a Loop name");

const agentName = z.string().regex(/^[a-z0-9][a-z0-9-_]{0,62}$/i, "an agent is a name from the roster");

/** An issue or pull request number: Postgres keeps it in an int. */
const itemNumber = z.number().int("an issue or pull request number").min(1).max(2_147_483_647);

export const emptyBody = z.strictObject({});

export const editAndRetryBody = z
  .strictObject({
    prompt: z.string().min(1, "the prompt cannot be empty").max(100_000).optional(),
    agent: agentName.optional(),
    /** a model of the agent's roster `model`/`models`; null: the agent's default */
    model: z.string().min(1, "the model cannot be empty: give null for the agent's default").max(200).nullable().optional(),
  })
  .refine((b) => b.prompt !== undefined || b.agent !== undefined || b.model !== undefined, { message: "give a new prompt, a new agent or a new model" });

export const interveneBody = z.strictObject({
  attemptId: z.string().min(1).max(400),
  text: z.string().min(1, "the text cannot be empty").max(8_000),
});

export const pauseLoopBody = z.strictObject({
  repo,
  loop: loopName,
  paused: z.boolean(),
});

export const checkConfigBody = z.strictObject({ repo });

export const rebuildEnvironmentBody = z.strictObject({ repo, key: z.string().regex(/^[0-9a-f]{64}$/, "key is a snapshot's key: 64 hex digits") });

export const dispatchBody = z.strictObject({
  repo,
  loop: loopName,
  number: itemNumber,
});

export const createTokenBody = z.strictObject({
  name: z.string().trim().min(1, "name the token (what it is for)").max(100),
  scope: z.enum(["read", "act"], "the scope is read or act"),
  expiresInDays: z.number().int("a whole number of days").min(1).max(365, "a token lives at most 365 days"),
});

export const tokenIdParam = z.string().regex(/^[a-f0-9]{12}$/, "a token id");

export const moveCardBody = z.strictObject({
  repo,
  number: itemNumber,
  lane: z.string().min(1).max(100),
});

export const resetBudgetBody = z.strictObject({
  itemKey: z.string().min(1).max(400),
});

export const boardQuery = z.strictObject({
  repo: repo.optional(),
  loop: z.string().max(63).optional(),
  perLane: z.coerce.number().int().min(1).max(200).optional(),
});

export const repoQuery = z.strictObject({ repo: repo.optional() });

export const auditQuery = z.strictObject({
  repo: repo.optional(),
  before: z.string().regex(/^\d{1,18}$/, "before is an audit entry's id").optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});

/** `after`: an entry id (the entries after it); `limit`: one JSON page of at most that many (else the live stream). */
export const transcriptQuery = z.strictObject({
  after: z.string().regex(/^\d{1,18}$/, "after is a transcript entry's id").optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

/** The Runs list's filters (each kept in the page's URL) and its keyset cursor. */
/** GET /api/v1/insights: filtered as the Runs list is, over a range of days (lib/dashboard/insights.ts checks the range). */
export const insightsQuery = z.strictObject({
  repo: repo.optional(),
  loop: loopName.optional(),
  agent: agentName.optional(),
  from: z.string().regex(/^\d{4}-\d\d-\d\d$/, "from is a day as YYYY-MM-DD").optional(),
  to: z.string().regex(/^\d{4}-\d\d-\d\d$/, "to is a day as YYYY-MM-DD").optional(),
});

export const runsQuery = z.strictObject({
  repo: repo.optional(),
  loop: loopName.optional(),
  agent: agentName.optional(),
  state: z.enum(RUN_STATES, `a state is one of ${RUN_STATES.join(", ")}`).optional(),
  q: z.string().trim().max(200, "a search is at most 200 characters").optional(),
  cursor: z.string().max(400).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});
