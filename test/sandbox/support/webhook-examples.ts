import { createRequire } from "node:module";

interface ExampleGroup {
  name: string;
  actions: string[];
  examples: Array<Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
const groups = require("@octokit/webhooks-examples/api.github.com/index.json") as ExampleGroup[];

/** Where the package has no example for an action, the keys of a sibling action stand in. */
const STAND_INS: Record<string, { from: string; plus?: string[] }> = {
  "issues.closed": { from: "issues.reopened" },
  "pull_request.edited": { from: "pull_request.opened", plus: ["changes"] },
  "issue_comment.edited": { from: "issue_comment.created", plus: ["changes"] },
  "repository.deleted": { from: "repository.created" },
};

/**
 * Top-level keys of the examples of `event.action` in @octokit/webhooks-examples (their
 * union). `changes` on `opened` only appears for transferred issues, so it is left out.
 */
export function exampleKeys(event: string, action: string): string[] {
  const standIn = STAND_INS[`${event}.${action}`];
  if (standIn) {
    const [fromEvent = "", fromAction = ""] = standIn.from.split(".");
    return [...new Set([...exampleKeys(fromEvent, fromAction), ...(standIn.plus ?? [])])];
  }
  const group = groups.find((g) => g.name === event);
  const examples = group?.examples.filter((e) => (e.action ?? "") === action) ?? [];
  if (examples.length === 0) throw new Error(`@octokit/webhooks-examples has no ${event}.${action}`);
  const keys = new Set(examples.flatMap((e) => Object.keys(e)));
  if (action === "opened") keys.delete("changes");
  return [...keys];
}
