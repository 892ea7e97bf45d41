import type { AnthropicTurn } from "../test/support/fake-anthropic";
import { COMMIT_HELLO } from "../test/executor/adapters/real-cli";

/**
 * What the scripted Messages API answers the real Claude Code CLI in the browser tests
 * (e2e/real-agent.spec.ts): one Run, two turns — a Bash tool call that writes and commits
 * hello.txt, then the final answer.
 */
export const CLAUDE_FIRST_TEXT = "I will add hello.txt and commit it.";
export const CLAUDE_ANSWER = "Added hello.txt with a greeting and committed it.";

export const CLAUDE_SCRIPT: AnthropicTurn[] = [
  { text: CLAUDE_FIRST_TEXT, tools: [{ name: "Bash", input: { command: COMMIT_HELLO, description: "Write and commit hello.txt" } }] },
  { text: CLAUDE_ANSWER },
];
