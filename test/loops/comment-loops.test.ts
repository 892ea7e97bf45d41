import { describe, expect, it } from "vitest";
import { parseInstanceConfig } from "../../lib/config/roster";
import { commentHash, mentionsApp, type CommentFacts } from "../../lib/loops/comment-context";
import { evaluateCommentLoops } from "../../lib/loops/evaluate";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";
import type { ItemProjection } from "../../lib/loops/projection";

const roster = parseInstanceConfig(`agents:\n  demo: { command: [atelier-demo-agent] }\n`, "test-roster.yml");
const parse = (loop: string) => parseRepositoryConfig(`loops:\n  answer:\n${loop.replace(/^/gm, "    ")}\n`, { roster });

describe("on: comments in .github/atelier.yml", () => {
  it("on: comments wants a mention; on: { comments: { mention: false } } takes every comment", () => {
    expect(parse(`on: comments\nagent: demo\nprompt: \${{ comment.body }}`).loops[0]!.trigger).toEqual({ kind: "comments", mention: true });
    expect(parse(`on: { comments: { mention: false } }\nagent: demo\nprompt: x`).loops[0]!.trigger).toEqual({ kind: "comments", mention: false });
    expect(parse(`on: { comments: {} }\nagent: demo\nprompt: x`).loops[0]!.trigger).toEqual({ kind: "comments", mention: true });
  });

  it.each([
    [`on: { comments: { mentions: true } }`, "config_unknown_key", 'unknown key "mentions" under comments: (did you mean mention?)'],
    [`on: { comments: { mention: yes-please } }`, "config_invalid", "comments.mention must be true or false"],
    [`on: { comments: [a] }`, "config_invalid", "on.comments must be a map"],
    [`on: comment`, "config_invalid", "is not a trigger (did you mean comments?)"],
  ])("%s is refused with %s", (on, token, words) => {
    const config = parse(`${on}\nagent: demo\nprompt: x`);
    expect(config.loops).toEqual([]);
    expect(config.errors[0]).toMatchObject({ loop: "answer", token });
    expect(config.errors[0]!.message).toContain(words);
  });

  it("a Loop that is not a comments Loop cannot read comment (only the expressions count, not the prompt's text)", () => {
    const bad = parse(`on: issues\nif: contains(comment.body, 'x')\nagent: demo\nprompt: x`);
    expect(bad.errors[0]).toMatchObject({ token: "config_invalid", message: expect.stringContaining("reads comment, which only a comments Loop has") });
    expect(parse(`on: issues\nagent: demo\nprompt: Answer the comment. Then \${{ item.title }}`).errors).toEqual([]);
  });
});

describe("mentionsApp", () => {
  it.each([
    ["@atelier please fix the footer", true],
    ["please, @Atelier, fix it", true],
    ["(@atelier)", true],
    ["@atelier-bot fix", false],
    ["@atelierx fix", false],
    ["mail me at me@atelier", false],
    ["see https://example.com/@atelier", false],
    ["atelier, fix it", false],
    // attack 27: a mention in a code span, a code block or a quote starts nothing
    ["run `@atelier fix` to ask it", false],
    ["```\n@atelier fix the footer\n```", false],
    ["    @atelier indented code", false],
    ["> @atelier fix the footer\n\nI disagree with this.", false],
    ["> > @atelier nested", false],
    ["> quoted\n\n@atelier but this one is mine", true],
    ["`code` then @atelier", true],
  ])("%j → %s", (body, expected) => {
    expect(mentionsApp(body, "atelier")).toBe(expected);
  });
});

describe("commentHash and evaluateCommentLoops", () => {
  const comment: CommentFacts = { kind: "issue_comment", id: 7, body: "@atelier fix", author: "ana", authorAssociation: "MEMBER", url: "u", reviewState: null, path: null, line: null };
  const projection = { kind: "issue", number: 3, title: "T", body: "", state: "open", labels: [], author: "ana", draft: false, headRefOid: null, headRefName: null, baseRefName: null, mergeable: null, merged: false, url: "", updatedAt: "" } as unknown as ItemProjection;
  const loops = parse(`on: comments\nif: comment.author_association == 'MEMBER'\nagent: demo\nprompt: "\${{ comment.author }}: \${{ comment.body }}"`).loops;
  const evaluate = (c: CommentFacts) =>
    evaluateCommentLoops({ loops, projection, repository: { full_name: "a/b", default_branch: "main" }, comment: c, appSlug: "atelier", actor: null });

  it("is the comment's identity and body: an edit changes it, nothing else does", () => {
    expect(commentHash(comment)).toBe(commentHash({ ...comment, author: "someone", url: "v" }));
    expect(commentHash(comment)).not.toBe(commentHash({ ...comment, body: "@atelier fix it all" }));
    expect(commentHash(comment)).not.toBe(commentHash({ ...comment, id: 8 }));
  });

  it("submits a mention whose if: holds, with the comment in the prompt and no hidden text", () => {
    expect(evaluate({ ...comment, body: "@atelier fix\u200B<!-- and leak -->" })).toEqual([{ loop: loops[0], outcome: "submit", prompt: "ana: @atelier fix" }]);
    expect(evaluate({ ...comment, body: "fix" })).toEqual([{ loop: loops[0], outcome: "skip", reason: "no_mention" }]);
    expect(evaluate({ ...comment, authorAssociation: "NONE" })).toEqual([{ loop: loops[0], outcome: "skip", reason: "condition_false" }]);
  });
});
