import { AGENT_KINDS, type AgentKind } from "./types";

export function isAgentKind(s: string): s is AgentKind {
  return (AGENT_KINDS as readonly string[]).includes(s);
}

/** The kind a roster command implies: its program's name (claude, codex), else command. */
export function inferAgentKind(command: readonly string[]): AgentKind {
  const program = (command[0] ?? "").split(/[\\/]/).pop()!.replace(/\.(exe|cmd|js|mjs|cjs)$/i, "");
  return program === "claude" || program === "codex" ? program : "command";
}
