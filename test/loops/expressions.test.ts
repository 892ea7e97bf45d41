import { describe, expect, it } from "vitest";
import { BadInputError } from "../../lib/errors";
import {
  buildItemContext,
  buildTickContext,
  compileCondition,
  compileTemplate,
  evaluateCondition,
  ExpressionEvaluationError,
  ExpressionSyntaxError,
  fromExpressionData,
  renderTemplate,
  toExpressionData,
  type ExpressionContext,
} from "../../lib/loops/expressions";
import type { ItemProjection } from "../../lib/loops/projection";

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
  title: "Fix the crash",
  labels: ["in-review"],
  draft: true,
  headRefName: "atelier/start-dev/12",
  headRefOid: "abc123",
  baseRefName: "main",
  mergeable: true,
  url: "https://github.com/acme/api/pull/40",
};

const repository = { full_name: "acme/api", default_branch: "main", private: true };
const loop = { name: "start-dev", agent: "claude", max_cycles: 3 };
const ctx = (projection: ItemProjection = issue): ExpressionContext => ({
  item: buildItemContext(projection),
  repository,
  loop,
});
const check = (src: string, context = ctx()) => evaluateCondition(compileCondition(src), context);

function syntaxError(fn: () => unknown): ExpressionSyntaxError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ExpressionSyntaxError);
    expect(err).toBeInstanceOf(BadInputError);
    expect((err as ExpressionSyntaxError).token).toBe("config_bad_expression");
    return err as ExpressionSyntaxError;
  }
  throw new Error("expected an ExpressionSyntaxError");
}

describe("buildItemContext", () => {
  it("turns a Projection into the `item` expressions see (golden)", () => {
    expect(buildItemContext(pull)).toEqual({
      kind: "pull_request",
      number: 40,
      title: "Fix the crash",
      body: "It crashes.",
      state: "open",
      labels: [{ name: "in-review" }],
      author: "octocat",
      draft: true,
      head_sha: "abc123",
      head_ref: "atelier/start-dev/12",
      base_ref: "main",
      mergeable: true,
      merged: false,
      url: "https://github.com/acme/api/pull/40",
      author_association: null,
      actor: null,
      actor_permission: null,
      reviews: [],
      review_threads: [],
      checks: [],
    });
  });

  it("carries who caused the match, when the Event knows it", () => {
    expect(buildItemContext(pull, { authorAssociation: "NONE", login: "stranger", permission: "none" })).toMatchObject({
      author_association: "NONE",
      actor: "stranger",
      actor_permission: "none",
    });
  });

  it("gives a Tick as the item of a schedule Loop (golden)", () => {
    expect(
      buildTickContext({ scheduledAt: new Date("2026-03-30T04:00:00Z"), cron: "0 6 * * 1-5", tz: "Europe/Paris" }),
    ).toEqual({
      kind: "tick",
      tick: {
        scheduledAt: "2026-03-30T04:00:00.000Z",
        scheduledAtLocal: "2026-03-30T06:00:00+02:00",
        cron: "0 6 * * 1-5",
        tz: "Europe/Paris",
      },
    });
  });
});

describe("compileCondition and evaluateCondition", () => {
  const READY = "contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'";

  it("the start-dev condition matches an open issue labelled ready-for-agent", () => {
    expect(check(READY)).toBe(true);
  });
  it("the start-dev condition does not match without the label, or once closed", () => {
    expect(check(READY, ctx({ ...issue, labels: ["bug"] }))).toBe(false);
    expect(check(READY, ctx({ ...issue, state: "closed" }))).toBe(false);
    expect(check(READY, ctx({ ...issue, labels: [] }))).toBe(false);
  });

  it.each([
    ["item.kind == 'issue'", true],
    ["item.number == 12", true],
    ["item.number > 10 && item.number < 13", true],
    ["item.number >= 13", false],
    ["item.number == '12'", true], // Actions coerces the string to a number
    ["item.title == 'CRASH ON EMPTY CONFIG'", true], // string equality ignores case, as in Actions
    ["startsWith(item.title, 'crash')", true],
    ["endsWith(item.url, '/issues/12')", true],
    ["contains(item.body, 'crash')", true],
    ["contains(item.labels.*.name, 'Bug')", true],
    ["!contains(item.labels.*.name, 'wontfix')", true],
    ["item.author == 'octocat' || item.author == 'mona'", true],
    ["repository.full_name == 'acme/api' && repository.private", true],
    ["loop.name == 'start-dev' && loop.max_cycles == 3", true],
    ["item.labels[0].name == 'bug'", true],
    ["item.labels[5].name", false],
    ["Item.Number == 12", true], // names are case-insensitive
    ["format('{0}#{1}', repository.full_name, item.number) == 'acme/api#12'", true],
    ["join(item.labels.*.name, ',') == 'bug,ready-for-agent'", true],
    ["fromJSON('[1,2]')[1] == 2", true],
    ["${{ item.state == 'open' }}", true],
    ["  ${{ item.state == 'closed' }}  ", false],
  ])("%s → %s", (src, expected) => {
    expect(check(src)).toBe(expected);
  });

  it.each([
    ["null", false],
    ["false", false],
    ["0", false],
    ["-0", false],
    ["''", false],
    ["item.nope", false],
    ["item.mergeable", false], // null on an issue
    ["item.draft", false],
    ["true", true],
    ["1", true],
    ["-1", true],
    ["'false'", true], // a non-empty string is true
    ["'0'", true],
    ["item.labels", true], // an array is true
    ["item", true], // an object is true
    ["fromJSON('[]')", true],
  ])("truthiness: %s is %s", (src, expected) => {
    expect(check(src)).toBe(expected);
  });

  it("pull request fields", () => {
    const c = ctx(pull);
    expect(check("item.kind == 'pull_request' && item.draft && item.mergeable", c)).toBe(true);
    expect(check("item.head_ref == 'atelier/start-dev/12' && item.base_ref == 'main'", c)).toBe(true);
    expect(check("item.head_sha == 'abc123'", c)).toBe(true);
  });

  it("a Tick's fields", () => {
    const tick = buildTickContext({ scheduledAt: new Date("2026-03-30T04:00:00Z"), cron: "0 6 * * 1-5", tz: "Europe/Paris" });
    const c = { item: tick, repository, loop };
    expect(check("item.kind == 'tick' && startsWith(item.tick.scheduledAtLocal, '2026-03-30T06:00')", c)).toBe(true);
    expect(check("item.tick.tz == 'Europe/Paris' && item.tick.cron == '0 6 * * 1-5'", c)).toBe(true);
    expect(check("item.number", c)).toBe(false);
  });

  it("refuses a name other than item, repository and loop, when compiling", () => {
    const err = syntaxError(() => compileCondition("item.state == 'open' && github.event_name == 'push'"));
    expect(err.message).toBe(
      `Unknown name 'github' at line 1, column 25 of "item.state == 'open' && github.event_name == 'push'": the names you can use are item, repository, loop and comment (e.g. item.title, repository.full_name, comment.body).`,
    );
    expect([err.line, err.column]).toEqual([1, 25]);
    for (const name of ["env", "secrets", "steps", "inputs", "vars", "runner", "job", "matrix"]) {
      expect(syntaxError(() => compileCondition(`${name}.x == 1`)).message).toContain(`Unknown name '${name}'`);
    }
  });

  it("refuses an unknown function, listing the ones there are", () => {
    const err = syntaxError(() => compileCondition("success() && item.number > 1"));
    expect(err.message).toContain("Unknown function 'success' at line 1, column 1");
    expect(err.message).toContain("contains(), startsWith(), endsWith(), format(), join(), toJSON(), fromJSON()");
    expect(syntaxError(() => compileCondition("hashFiles('x')")).message).toContain("Unknown function 'hashFiles'");
  });

  it.each([
    ["item.state = 'open'", 1, 12, "unexpected symbol '='"],
    ['item.state == "open"', 1, 15, "strings take single quotes"],
    ["item.state == 'open' &&", 1, 22, "ends too early"],
    ["(item.number == 1", 1, 17, "ends too early after '1'"],
    ["contains(item.labels)", 1, 1, "wrong number of arguments"],
    ["item.number 2", 1, 13, "unexpected symbol '2'"],
    ["item.number > 5 &", 1, 17, "unexpected symbol '&'"],
    ["item.title == 'open", 1, 15, "unexpected symbol"],
    ["", 1, 1, "The expression is empty"],
    ["   ", 1, 1, "The expression is empty"],
    ["item.state == 'open' &&\n  item.number >", 2, 15, "ends too early"],
  ])("refuses %j at line %i, column %i (%s)", (src, line, column, fragment) => {
    const err = syntaxError(() => compileCondition(src));
    expect(err.message).toContain(fragment);
    expect([err.line, err.column]).toEqual([line, column]);
  });

  it("refuses a condition that mixes text and ${{ }} (always true in Actions, a classic mistake)", () => {
    expect(syntaxError(() => compileCondition("ready ${{ item.number }}")).message).toContain("mixes text and ${{ }}");
    expect(syntaxError(() => compileCondition("${{ item.draft }} && ${{ item.merged }}")).message).toContain("mixes");
  });

  it("a failure while evaluating is a typed error", () => {
    const compiled = compileCondition("fromJSON(item.body)");
    try {
      evaluateCondition(compiled, ctx());
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ExpressionEvaluationError);
      expect((err as ExpressionEvaluationError).token).toBe("expression_evaluation_failed");
      expect((err as Error).message).toContain('The expression "fromJSON(item.body)" failed while evaluating');
    }
  });
});

describe("renderTemplate", () => {
  it("renders the start-dev prompt (golden)", () => {
    const prompt = "Implement issue #${{ item.number }}: ${{ item.title }}\n${{ item.body }}\n";
    expect(renderTemplate(prompt, ctx())).toBe("Implement issue #12: Crash on empty config\nIt crashes.\n");
  });

  it.each([
    ["no expressions at all", "no expressions at all"],
    ["", ""],
    ["${{ item.number }}", "12"],
    ["${{ item.number / 1 }}", null], // division is not in the language
    ["${{ 1.50 }}|${{ 0.1 }}|${{ -3 }}", "1.5|0.1|-3"],
    ["${{ item.draft }}/${{ !item.draft }}", "false/true"],
    ["[${{ item.mergeable }}][${{ item.nope }}]", "[][]"],
    ["${{ join(item.labels.*.name, ', ') }}", "bug, ready-for-agent"],
    ["${{ item.labels.*.name }}", '[\n  "bug",\n  "ready-for-agent"\n]'],
    ["${{ item.labels[0] }}", '{\n  "name": "bug"\n}'],
    ["${{ toJSON(item.labels.*.name) }}", '[\n  "bug",\n  "ready-for-agent"\n]'],
    ["${{ format('{0}}}', 'x') }} and ${{ 'a }} b' }}", "x} and a }} b"],
    ["${{ 'it''s' }}", "it's"],
    ["${{item.number}}${{item.number}}", "1212"],
    ["$ {{ not an expression }} and ${ item.number }", "$ {{ not an expression }} and ${ item.number }"],
    ["${{ repository.full_name }}@${{ repository.default_branch }} by ${{ loop.agent }}", "acme/api@main by claude"],
  ])("%j → %j", (src, expected) => {
    if (expected === null) {
      syntaxError(() => renderTemplate(src, ctx()));
      return;
    }
    expect(renderTemplate(src, ctx())).toBe(expected);
  });

  it("reports an unknown name with its line and column in the prompt", () => {
    const err = syntaxError(() => renderTemplate("Implement #${{ item.number }}\nSee ${{ github.sha }}.", ctx()));
    expect([err.line, err.column]).toEqual([2, 9]);
    expect(err.message).toContain("Unknown name 'github' at line 2, column 9");
  });

  it("reports an unclosed or empty ${{", () => {
    const unclosed = syntaxError(() => renderTemplate("Title: ${{ item.title\nmore", ctx()));
    expect(unclosed.message).toBe("The ${{ at line 1, column 8 has no closing }}: close it, or remove it.");
    const empty = syntaxError(() => renderTemplate("a\n  ${{   }}", ctx()));
    expect(empty.message).toBe("The ${{ }} at line 2, column 3 is empty: put an expression inside, e.g. ${{ item.title }}.");
  });

  it("a failure while rendering is a typed error", () => {
    expect(() => renderTemplate("${{ fromJSON('{') }}", ctx())).toThrow(ExpressionEvaluationError);
  });

  it("compileTemplate splits text and expressions", () => {
    const t = compileTemplate("a ${{ item.number }} b");
    expect(t.segments.map((s) => ("text" in s ? `text:${s.text}` : `expr:${s.source}@${s.line}:${s.column}`))).toEqual([
      "text:a ",
      "expr:item.number@1:3",
      "text: b",
    ]);
  });
});

describe("toExpressionData / fromExpressionData", () => {
  it("round-trips JSON-like values; undefined keys are dropped, Dates become ISO strings", () => {
    const value = { a: 1, b: "x", c: [true, null, { d: 2.5 }], e: undefined, f: new Date("2026-01-01T00:00:00Z") };
    expect(fromExpressionData(toExpressionData(value))).toEqual({
      a: 1,
      b: "x",
      c: [true, null, { d: 2.5 }],
      f: "2026-01-01T00:00:00.000Z",
    });
  });
});
