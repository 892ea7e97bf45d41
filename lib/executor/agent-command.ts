import { fileURLToPath } from "node:url";

/** The command that names the built-in demo agent in a roster. */
export const DEMO_AGENT_COMMAND = "atelier-demo-agent";

/** The demo agent's script: plain ESM, run by this same node, so it needs no build. */
export const DEMO_AGENT_SCRIPT = fileURLToPath(new URL("./demo-agent.mjs", import.meta.url));

export interface ResolvedCommand {
  file: string;
  args: string[];
  /** Worker environment variables passed through besides the roster's secrets. */
  passEnvPrefixes: string[];
  builtin: boolean;
}

export function isDemoAgent(command: readonly string[]): boolean {
  return command.length === 1 && command[0] === DEMO_AGENT_COMMAND;
}

/** The argv to spawn for a roster command. */
export function resolveAgentCommand(command: readonly string[]): ResolvedCommand {
  if (isDemoAgent(command)) {
    return { file: process.execPath, args: [DEMO_AGENT_SCRIPT], passEnvPrefixes: ["ATELIER_DEMO_"], builtin: true };
  }
  const [file, ...args] = command;
  if (!file) throw new Error("an agent command cannot be empty");
  return { file, args, passEnvPrefixes: [], builtin: false };
}
