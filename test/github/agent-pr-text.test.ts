import { describe, expect, it } from "vitest";
import { neutralizeAgentText, neutralizeAgentTextWithin } from "../../lib/github/agent-pr-text";

const own = { repo: "acme/widgets", number: 7 };

describe("neutralizeAgentText", () => {
  it("puts @-mentions of people and teams in code spans, not e-mail addresses", () => {
    expect(neutralizeAgentText("cc @acme/security, @octocat and me@example.com", own)).toBe("cc `@acme/security`, `@octocat` and me@example.com");
  });

  it("keeps the Run's own closing keyword, in any of its forms, and neutralizes every other", () => {
    for (const kept of ["Closes #7", "fixes acme/widgets#7", "Resolved: https://github.com/acme/widgets/issues/7", "FIXED ACME/WIDGETS#7"]) expect(neutralizeAgentText(kept, own)).toBe(kept);
    expect(neutralizeAgentText("closes #70, fix acme/other#7, resolves https://github.com/acme/widgets/issues/8", own)).toBe(
      "`closes #70`, `fix acme/other#7`, `resolves https://github.com/acme/widgets/issues/8`",
    );
    expect(neutralizeAgentText("fixed 12 bugs", own)).toBe("fixed 12 bugs");
  });

  it("leaves code spans and fenced blocks as they are, and a text with none of these alone", () => {
    expect(neutralizeAgentText("`x @y` and ```\nfixes #3 @z\n``` then @w", own)).toBe("`x @y` and ```\nfixes #3 @z\n``` then `@w`");
    expect(neutralizeAgentText("Plain text.", own)).toBe("Plain text.");
  });

  it("cuts the agent's text before neutralizing, so no cut leaves a mention live", () => {
    const text = `${"a".repeat(20)} @acme/security`;
    const cut = neutralizeAgentTextWithin(text, own, 30);
    expect(cut.length).toBeLessThanOrEqual(30);
    expect(cut).not.toMatch(/(^|[^`])@/);
  });
});
