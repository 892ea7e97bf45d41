import { z } from "zod";

/**
 * The shapes of the webhook payloads Atelier acts on, checked before a handler sees one: only
 * the fields the handlers read, with the types `@octokit/webhooks-schemas` gives them, and
 * nothing that Postgres would refuse (a NUL in a text, an id past a bigint). Every other field
 * passes through unread. A delivery that does not fit is answered 200 "filtered" — GitHub would
 * only redeliver it the same way — with a log line naming what did not fit.
 */

/** A text Postgres can store: no NUL, of a sane length. */
const text = (max = 1_000) =>
  z
    .string()
    .max(max)
    .refine((s) => !s.includes("\u0000"), "contains a NUL character");
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const fullName = text(300).regex(/^[^/\s]+\/[^/\s]+$/, "is not owner/name");
const loose = z.looseObject;

const installation = loose({ id });
const account = loose({ login: text(100), id: id.optional(), type: text(50).optional() });
const repository = loose({ id: id.optional(), full_name: fullName, default_branch: text(300).optional() });
const repositoryRef = loose({ id, full_name: fullName, private: z.boolean().optional(), default_branch: text(300).optional() });
const sender = loose({ login: text(100), id: id.optional() });
const action = text(100);

const installationEvent = loose({
  action,
  installation: loose({ id, account, suspended_at: text(100).nullable().optional() }),
  repositories: z.array(repositoryRef).max(100_000).optional(),
});

const installationRepositoriesEvent = loose({
  action,
  installation: loose({ id, account, suspended_at: text(100).nullable().optional() }),
  repositories_added: z.array(repositoryRef).max(100_000),
  repositories_removed: z.array(loose({ id })).max(100_000),
});

/** A repository renamed, transferred or deleted: the repository as it is now (its id is what Atelier keys it by). */
const repositoryEvent = loose({ action, installation: loose({ id }), repository: repositoryRef });

/** An event of an Item (an issue or a pull request): its action, installation, repository and sender, and `fields` of its own. */
const itemEvent = <T extends z.core.$ZodLooseShape>(fields: T) =>
  loose({ action, installation: installation.optional(), repository, ...fields, sender: sender.optional() });

const issuesEvent = itemEvent({ issue: loose({ number: id }) });
const pullRequestEvent = itemEvent({ number: id.optional(), pull_request: loose({ number: id }) });

const commentBody = loose({ id, body: text(70_000).nullable().optional() });
const issueCommentEvent = itemEvent({ issue: loose({ number: id }), comment: commentBody });
const reviewCommentEvent = itemEvent({ pull_request: loose({ number: id }), comment: commentBody });
const reviewEvent = itemEvent({ pull_request: loose({ number: id }), review: commentBody });

const labelEvent = loose({ action, installation: installation.optional(), repository });

const pathList = z.array(text(5_000)).max(100_000).optional();
const pushEvent = loose({
  ref: text(1_000),
  installation: installation.optional(),
  repository: loose({ full_name: fullName, default_branch: text(300).optional() }),
  commits: z.array(loose({ added: pathList, modified: pathList, removed: pathList })).max(100_000).optional(),
});

const sha = text(64).regex(/^[0-9a-f]{7,64}$/i, "is not a commit id");
const namedPulls = z.array(loose({ number: id })).max(1_000).optional();
const checkRunEvent = loose({
  action,
  installation: installation.nullable().optional(),
  repository: loose({ full_name: fullName }),
  check_run: loose({ id, external_id: text(200).nullable().optional(), head_sha: sha.optional(), pull_requests: namedPulls }),
  requested_action: loose({ identifier: text(100).optional() }).nullable().optional(),
  sender: loose({ login: text(100), id: id.optional() }),
});

const checkSuiteEvent = loose({
  action,
  installation: installation.optional(),
  repository,
  check_suite: loose({ id, head_sha: sha, pull_requests: namedPulls }),
});
const statusEvent = loose({ installation: installation.optional(), repository, sha, state: text(20) });

const SCHEMAS: Record<string, z.ZodType> = {
  installation: installationEvent,
  installation_repositories: installationRepositoriesEvent,
  repository: repositoryEvent,
  issues: issuesEvent,
  pull_request: pullRequestEvent,
  issue_comment: issueCommentEvent,
  pull_request_review_comment: reviewCommentEvent,
  pull_request_review: reviewEvent,
  pull_request_review_thread: pullRequestEvent,
  label: labelEvent,
  push: pushEvent,
  check_run: checkRunEvent,
  check_suite: checkSuiteEvent,
  status: statusEvent,
};

export type PayloadCheck = { ok: true; payload: Record<string, unknown> } | { ok: false; problems: string[] };

/** Checks a payload of an event Atelier acts on; an event it has no schema for passes unchecked. */
export function checkWebhookPayload(event: string, payload: Record<string, unknown>): PayloadCheck {
  const schema = SCHEMAS[event];
  if (!schema) return { ok: true, payload };
  const parsed = schema.safeParse(payload);
  if (parsed.success) return { ok: true, payload };
  return { ok: false, problems: parsed.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join(".") || "(payload)"}: ${i.message}`) };
}
