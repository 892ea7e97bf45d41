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

/**
 * The script of agent `claude-env` (e2e/environment.spec.ts): two Attempts, each a Bash tool
 * call that runs the repository's tests (their dependencies installed by setup, or restored
 * from the snapshot) and commits a note when they pass, then the final answer.
 */
export const ENV_TEST_COMMAND = "npm test && printf 'The tests pass.\\n' > TESTED.md && git add TESTED.md && git commit -q -m 'Run the tests' && echo committed";
export const CLAUDE_ENV_ANSWER = "The tests pass with the installed dependencies; I noted it in TESTED.md.";

const envAttempt: AnthropicTurn[] = [
  { text: "I will run the tests.", tools: [{ name: "Bash", input: { command: ENV_TEST_COMMAND, description: "Run the tests and note the result" } }] },
  { text: CLAUDE_ENV_ANSWER },
];
export const CLAUDE_ENV_SCRIPT: AnthropicTurn[] = [...envAttempt, ...envAttempt];
