import { isoSeconds } from "./sim-clock";
import type { Connection, FeedbackTools } from "./graphql-feedback";
import type { SimIssue, SimIssueEvent, SimRepo } from "./model";

/**
 * An Item's `timelineItems` from its recorded events (the ones GET …/issues/{n}/events lists),
 * with GitHub's type names and `itemTypes` filter: each event carries its actor and time.
 */

const TYPENAMES: Record<SimIssueEvent["event"], string> = {
  labeled: "LabeledEvent",
  unlabeled: "UnlabeledEvent",
  renamed: "RenamedTitleEvent",
  closed: "ClosedEvent",
  reopened: "ReopenedEvent",
  ready_for_review: "ReadyForReviewEvent",
  convert_to_draft: "ConvertToDraftEvent",
};

/** LabeledEvent → LABELED_EVENT, as GitHub names the item types. */
const itemTypeOf = (typename: string): string => typename.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();

interface TimelineArgs extends Connection {
  itemTypes?: string[] | null;
}

export function timelineItemsField(t: FeedbackTools, repo: SimRepo, item: SimIssue) {
  return (args: TimelineArgs) => {
    const events = t.state
      .issueEventsOf(repo, item.number)
      .map((e) => ({ e, typename: TYPENAMES[e.event] }))
      .filter(({ typename }) => !args.itemTypes || args.itemTypes.includes(itemTypeOf(typename)));
    const nodes = t.window("timelineItems", events, args).map(({ e, typename }) => ({
      __typename: typename,
      id: e.nodeId,
      createdAt: isoSeconds(e.createdAt),
      actor: () => t.actor(t.state.account(e.actorId)),
      ...(e.label ? { label: { id: `${e.nodeId}:label`, name: e.label.name, color: e.label.color, description: null, isDefault: false } } : {}),
      ...(e.rename ? { previousTitle: e.rename.from, currentTitle: e.rename.to } : {}),
    }));
    return { nodes, totalCount: events.length, filteredCount: events.length, pageInfo: { hasNextPage: false, hasPreviousPage: nodes.length < events.length, startCursor: null, endCursor: null } };
  };
}
