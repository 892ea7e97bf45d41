/**
 * Adapters by agent kind: how Atelier runs an agent CLI and reads what it prints.
 *
 * How the executor is meant to use them (the sandbox work wires this into run-agent.ts):
 *
 *   const adapter = adapterFor(agent.kind);
 *   const inv = adapter.invocation(agent, { prompt, model: loopModel, resumeSession });
 *   // throws AttemptFailureError(configuration) for a roster the adapter cannot run
 *   spawn(inv.file, inv.args, { env: { ...cleanEnv, ...secrets, ...inv.env, ...ATELIER_* } });
 *   child.stdin.write(inv.stdin.text); if (inv.stdin.close) child.stdin.end();
 *   // close: false only for a streaming input (Claude with intervene: true): an operator's
 *   // message is written as inv.encodeIntervention(text); end stdin after a `final` step when
 *   // no intervention is pending, or the CLI waits for more input forever.
 *   const parser = adapter.parser(agent, { model: inv.model });
 *   child.stdout.on("data", (chunk) => store(parser.feed(chunk, "stdout")));   // raw chunks,
 *   child.stderr.on("data", (chunk) => store(parser.feed(chunk, "stderr")));   // not lines
 *   const { steps, report } = parser.end({ code, signal });
 *
 * Store each step as encodeStep(step) (a transcript entry of stream "step"; the Run page groups
 * them with lib/dashboard/transcript-steps.ts) and keep the raw lines too, for download. The
 * env a kind needs: claude CLAUDE_ENV (IS_SANDBOX=1, no telemetry, no autoupdater) and
 * CLAUDE_CODE_MAX_RETRIES (at most 3); codex NO_COLOR; all the roster's `env:`; no model key:
 * the executor gives ANTHROPIC_BASE_URL (codex: `modelApiUrl`, its provider's base_url) the
 * egress gateway's local URL and a placeholder key, and the gateway adds the real one
 * (brokered-apis.ts). `report` gives the session id (a UUID, else none: it becomes --resume's
 * value), the final answer (the Attempt's summary and the PR body), the agent's own usage (a
 * cross-check of the gateway's reading, or a claim floored at minutes × price) and a Failure classified from
 * the agent's own report — prefer it to "exited with code 1": authentication is not retried,
 * rate_limit/transport are InfraFailures retried with backoff, step_limit is max_turns.
 * Feed chunks after redaction: the parsers see only what may be shown. HOME must be writable
 * and private to the Attempt: Claude Code keeps $HOME/.claude/ and $HOME/.claude.json (its
 * sessions, for --resume), Codex $HOME/.codex/ (a CODEX_HOME that is set must exist).
 */

import { claudeAdapter } from "./claude";
import { codexAdapter } from "./codex";
import { commandAdapter } from "./command";
import type { AgentAdapter, AgentKind } from "./types";

export * from "./types";
export { claudeAdapter, claudeInvocation, claudeUserMessage, ClaudeStreamParser, CLAUDE_ENV, CLAUDE_MAX_RETRIES_CAP } from "./claude";
export { codexAdapter, codexInvocation, CodexStreamParser, CODEX_ENV, CODEX_PROVIDER_ID, CODEX_QUIET_CONFIG } from "./codex";
export { commandAdapter, commandInvocation, PlainTextParser } from "./command";
export { inferAgentKind, isAgentKind } from "./kind";
export { decodeStep, encodeStep, STEP_STREAM } from "./step-entry";

const ADAPTERS: Record<AgentKind, AgentAdapter> = { claude: claudeAdapter, codex: codexAdapter, command: commandAdapter };

export function adapterFor(kind: AgentKind): AgentAdapter {
  return ADAPTERS[kind];
}

