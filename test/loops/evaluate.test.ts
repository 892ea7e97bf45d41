import { describe, expect, it } from "vitest";
import { defaultInstanceConfig, parseInstanceConfig } from "../../lib/config/roster";
import { BadInputError } from "../../lib/errors";
import { evaluateLoopsForItem, evaluateTick, loopContext } from "../../lib/loops/evaluate";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";
import type { ItemProjection } from "../../lib/loops/projection";

const roster = parseInstanceConfig("agents:\n  claude: { command: [claude, -p] }\n  demo: { command: [atelier-demo-agent] }\n");

const config = parseRepositoryConfig(
  `loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: claude
    approval: required
    prompt: |
      Implement issue #\${{ item.number }}: \${{ item.title }}
      \${{ item.body }}
  review-pr:
    on: pull_requests
    if: contains(item.labels.*.name, 'in-review') && !item.draft
    agent: claude
    prompt: Review \${{ item.url }} (\${{ item.head_sha }} onto \${{ item.base_ref }}) for \${{ loop.name }}.
  always:
    on: issues
    agent: demo
    prompt: "#\${{ item.number }} in \${{ repository.full_name }}@\${{ repository.default_branch }}"
  bad-prompt:
    on: issues
    agent: demo
    prompt: "\${{ fromJSON(item.body) }}"
  bad-if:
    on: issues
    if: fromJSON(item.body)
    agent: demo
    prompt: x
  nightly:
    on: { schedule: { cron: "0 6 * * 1-5", tz: Europe/Paris } }
    if: "!endsWith(item.tick.scheduledAtLocal, '+01:00')"
    agent: claude
    prompt: "Triage \${{ repository.full_name }} for the run of \${{ item.tick.scheduledAtLocal }} (\${{ item.tick.cron }}, \${{ item.tick.tz }}; \${{ item.tick.scheduledAt }})."
`,
  { roster },
);

const repository = { full_name: "acme/api", default_branch: "main" };

const issue: ItemProjection = {
  kind: "issue",
  number: 12,
  title: "Crash on empty config",
  body: "It crashes.",
  state: "open",
  author: "octocat",
  labels: ["bug", "ready-for-agent"],
  draft: false,
  headRefName: null,
  headRefOid: null,
  baseRefName: null,
  mergeable: null,
  merged: false,
  url: "https://github.com/acme/api/issues/12",
  createdAt: "2026-01-02T03:04:05Z",
  updatedAt: "2026-01-03T03:04:05Z",
  closedAt: null,
  mergedAt: null,
};

const pull: ItemProjection = {
  ...issue,
  kind: "pull_request",
  number: 40,
  labels: ["in-review"],
  headRefName: "atelier/start-dev/12",
  headRefOid: "abc123",
  baseRefName: "main",
  mergeable: true,
  url: "https://github.com/acme/api/pull/40",
};

const summary = (decisions: ReturnType<typeof evaluateLoopsForItem>) =>
  decisions.map((d) => {
    switch (d.outcome) {
      case "submit":
        return [d.loop.name, "submit", d.prompt];
      case "error":
        return [d.loop.name, "error", d.token, d.where];
      case "skip":
        return [d.loop.name, "skip", d.reason];
      default:
        return [d.loop.name, d.outcome];
    }
  });

describe("evaluateLoopsForItem", () => {
  it("the config is what the tests think it is", () => {
    expect(config.errors).toEqual([]);
    expect(config.loops.map((l) => l.name)).toEqual(["start-dev", "review-pr", "always", "bad-prompt", "bad-if", "nightly"]);
  });

  it("an issue labelled ready-for-agent: the issues Loops decide, in order; a failure touches only its Loop (golden)", () => {
    expect(summary(evaluateLoopsForItem({ loops: config.loops, projection: issue, repository }))).toEqual([
      ["start-dev", "submit", "Implement issue #12: Crash on empty config\nIt crashes.\n"],
      ["always", "submit", "#12 in acme/api@main"],
      ["bad-prompt", "error", "expression_evaluation_failed", "prompt"],
      ["bad-if", "error", "expression_evaluation_failed", "if"],
    ]);
  });

  it("the error carries a sentence naming the Loop and the part that failed", () => {
    const decisions = evaluateLoopsForItem({ loops: config.loops, projection: issue, repository });
    const bad = decisions.find((d) => d.loop.name === "bad-prompt");
    expect(bad).toMatchObject({ outcome: "error" });
    expect(bad && "message" in bad ? bad.message : "").toMatch(
      /^Loop "bad-prompt", prompt: The expression "fromJSON\(item.body\)" failed while evaluating: /,
    );
  });

  it("an Item that no longer matches revokes", () => {
    const unlabelled = { ...issue, labels: ["bug"] };
    expect(summary(evaluateLoopsForItem({ loops: config.loops.slice(0, 3), projection: unlabelled, repository }))).toEqual([
      ["start-dev", "revoke"],
      ["always", "submit", "#12 in acme/api@main"],
    ]);
    const closed = { ...issue, state: "closed" as const };
    expect(evaluateLoopsForItem({ loops: config.loops.slice(0, 1), projection: closed, repository })[0]!.outcome).toBe("revoke");
  });

  it("a paused Loop neither submits nor revokes", () => {
    const loops = config.loops.slice(0, 3);
    expect(summary(evaluateLoopsForItem({ loops, projection: issue, repository, pausedLoops: ["start-dev"] }))).toEqual([
      ["start-dev", "skip", "paused"],
      ["always", "submit", "#12 in acme/api@main"],
    ]);
    expect(
      summary(evaluateLoopsForItem({ loops, projection: { ...issue, labels: [] }, repository, pausedLoops: new Set(["start-dev", "always"]) })),
    ).toEqual([
      ["start-dev", "skip", "paused"],
      ["always", "skip", "paused"],
    ]);
  });

  it("a pull request is seen only by pull_requests Loops (golden)", () => {
    expect(summary(evaluateLoopsForItem({ loops: config.loops, projection: pull, repository }))).toEqual([
      ["review-pr", "submit", "Review https://github.com/acme/api/pull/40 (abc123 onto main) for review-pr."],
    ]);
    expect(summary(evaluateLoopsForItem({ loops: config.loops, projection: { ...pull, draft: true }, repository }))).toEqual([
      ["review-pr", "revoke"],
    ]);
  });

  it("a submit keeps the Loop, for its agent, approval and budget", () => {
    const [first] = evaluateLoopsForItem({ loops: config.loops, projection: issue, repository });
    expect(first!.loop).toMatchObject({ name: "start-dev", agent: "claude", approval: "required", maxCycles: 3 });
  });

  it("no Loops, no decisions", () => {
    expect(evaluateLoopsForItem({ loops: [], projection: issue, repository })).toEqual([]);
  });

  it("works with Loops validated against the default roster", () => {
    const demo = parseRepositoryConfig("loops:\n  d: { on: issues, agent: demo, prompt: 'hi ${{ item.author }}' }\n", {
      roster: defaultInstanceConfig(),
    });
    expect(summary(evaluateLoopsForItem({ loops: demo.loops, projection: issue, repository }))).toEqual([["d", "submit", "hi octocat"]]);
  });
});

describe("evaluateTick", () => {
  const nightly = config.loops.find((l) => l.name === "nightly")!;

  it("renders the prompt with the Tick as the Item (golden)", () => {
    const decision = evaluateTick(nightly, { scheduledAt: new Date("2026-03-30T04:00:00Z") }, repository);
    expect(decision).toEqual({
      loop: nightly,
      outcome: "submit",
      prompt:
        "Triage acme/api for the run of 2026-03-30T06:00:00+02:00 (0 6 * * 1-5, Europe/Paris; 2026-03-30T04:00:00.000Z).",
      scheduledAt: new Date("2026-03-30T04:00:00Z"),
      tick: {
        scheduledAt: "2026-03-30T04:00:00.000Z",
        scheduledAtLocal: "2026-03-30T06:00:00+02:00",
        cron: "0 6 * * 1-5",
        tz: "Europe/Paris",
      },
    });
  });

  it("a false if: skips the Tick", () => {
    // In winter the local offset is +01:00, which this Loop's if: excludes.
    expect(evaluateTick(nightly, { scheduledAt: new Date("2026-03-27T05:00:00Z") }, repository)).toEqual({
      loop: nightly,
      outcome: "skip",
      reason: "condition_false",
    });
  });

  it("only schedule Loops have Ticks", () => {
    expect(() => evaluateTick(config.loops[0]!, { scheduledAt: new Date() }, repository)).toThrow(BadInputError);
  });
});

describe("loopContext", () => {
  it("is what `loop` shows expressions (golden)", () => {
    expect(loopContext(config.loops[0]!)).toEqual({
      name: "start-dev",
      agent: "claude",
      trigger: "issues",
      approval: "required",
      max_cycles: 3,
    });
  });
});
