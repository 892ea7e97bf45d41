import { graphqlLogin } from "./graphql-login";
import type { GraphqlActor } from "./graphql-login";

/**
 * The timeline events that change what a Loop reads of an Item (its labels, title, state,
 * draft flag), each with the person who made it: the candidates ADR 0009 calls "the actor of
 * the Item's latest timeline event". One list, read two ways: in the Item's own GraphQL
 * selection (`timelineItems(last: …, itemTypes: […])`), and by REST (GET …/issues/{n}/events)
 * when GraphQL could not answer.
 */
const EVENT_KINDS = [
  { rest: "labeled", itemType: "LABELED_EVENT", typename: "LabeledEvent", pullOnly: false },
  { rest: "unlabeled", itemType: "UNLABELED_EVENT", typename: "UnlabeledEvent", pullOnly: false },
  { rest: "renamed", itemType: "RENAMED_TITLE_EVENT", typename: "RenamedTitleEvent", pullOnly: false },
  { rest: "closed", itemType: "CLOSED_EVENT", typename: "ClosedEvent", pullOnly: false },
  { rest: "reopened", itemType: "REOPENED_EVENT", typename: "ReopenedEvent", pullOnly: false },
  { rest: "ready_for_review", itemType: "READY_FOR_REVIEW_EVENT", typename: "ReadyForReviewEvent", pullOnly: true },
  { rest: "convert_to_draft", itemType: "CONVERT_TO_DRAFT_EVENT", typename: "ConvertToDraftEvent", pullOnly: true },
] as const;

/** The REST event names of EVENT_KINDS. */
export const ACTOR_EVENT_NAMES: ReadonlySet<string> = new Set(EVENT_KINDS.map((k) => k.rest));

/** The newest events GraphQL is asked for: the newest of them with an actor is the candidate. */
export const TIMELINE_WINDOW = 10;

function timelineFields(pull: boolean): string {
  const kinds = EVENT_KINDS.filter((k) => pull || !k.pullOnly);
  const fragments = kinds.map((k) => `... on ${k.typename} { createdAt actor { __typename login } }`).join(" ");
  return `lastEditedAt editor { __typename login }
  timelineItems(last: ${TIMELINE_WINDOW}, itemTypes: [${kinds.map((k) => k.itemType).join(", ")}]) { nodes { __typename ${fragments} } }`;
}

/** The timeline selections of an Issue and of a PullRequest (their item-type enums differ), with who last edited the body. */
export const ISSUE_TIMELINE_FIELDS = timelineFields(false);
export const PULL_REQUEST_TIMELINE_FIELDS = timelineFields(true);

/** The latest event with an actor: the actor's REST-style login and when it happened. */
export interface TimelineEvent {
  login: string;
  createdAt: string;
}

/** Who last edited an Item's body, and when (GraphQL `editor`, `lastEditedAt`): a body edit has no timeline event. */
export interface BodyEdit {
  login: string;
  editedAt: string;
}

/** What GraphQL answered of the selection above. */
export interface GraphqlTimeline {
  lastEditedAt?: string | null;
  editor?: GraphqlActor | null;
  timelineItems?: { nodes?: ({ createdAt?: string; actor?: GraphqlActor | null } | null)[] | null } | null;
}

/**
 * The latest event with an actor, or null when the Item has none; undefined when GraphQL
 * cannot tell: the selection is missing, or every event of a full window lacks its actor
 * (an older one may have one) — then the REST events decide.
 */
export function latestEventFromGraphql(node: GraphqlTimeline): TimelineEvent | null | undefined {
  const nodes = node.timelineItems?.nodes;
  if (!nodes) return undefined;
  let latest: TimelineEvent | null = null;
  for (const event of nodes) {
    const login = graphqlLogin(event?.actor);
    if (login && event?.createdAt && (!latest || Date.parse(event.createdAt) >= Date.parse(latest.createdAt))) latest = { login, createdAt: event.createdAt };
  }
  return latest === null && nodes.length >= TIMELINE_WINDOW ? undefined : latest;
}

/** Who last edited the body, or null when no one did (or the editor is a deleted user); undefined when the selection is missing. */
export function bodyEditFromGraphql(node: GraphqlTimeline): BodyEdit | null | undefined {
  if (node.lastEditedAt === undefined) return undefined;
  const login = graphqlLogin(node.editor);
  return login && node.lastEditedAt ? { login, editedAt: node.lastEditedAt } : null;
}

/** What an Item's GraphQL read tells of who changed it: its latest timeline event and its body's last edit. */
export function changesFromGraphql(node: GraphqlTimeline): { latestEvent: TimelineEvent | null | undefined; bodyEdit: BodyEdit | null | undefined } {
  return { latestEvent: latestEventFromGraphql(node), bodyEdit: bodyEditFromGraphql(node) };
}
