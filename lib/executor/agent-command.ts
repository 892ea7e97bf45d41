import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SANDBOX_BIN } from "./agent-sandbox/bwrap-args";

/** The command that names the built-in demo agent in a roster. */
export const DEMO_AGENT_COMMAND = "atelier-demo-agent";

/** The demo agent's script: plain ESM, run by this same node, so it needs no build. */
export const DEMO_AGENT_SCRIPT = fileURLToPath(new URL("./demo-agent.mjs", import.meta.url));

/** The system directories every sandbox holds (read-only): where a roster's tools are looked up. */
export const SANDBOX_PATH_DIRS = ["/usr/local/bin", "/usr/bin", "/bin"];
/** The sandbox's PATH: the system's (a repository's toolchains go before it: environment/toolchains.ts). */
export const SANDBOX_PATH = SANDBOX_PATH_DIRS.join(":");

export interface ResolvedCommand {
  /** argv on the host (an unconfined agent). */
  file: string;
  args: string[];
  /** argv inside the sandbox. */
  sandboxFile: string;
  sandboxArgs: string[];
  /** Host files the sandbox binds into /atelier/bin, by name. */
  programs: Record<string, string>;
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
    return {
      file: process.execPath,
      args: [DEMO_AGENT_SCRIPT],
      sandboxFile: process.execPath,
      sandboxArgs: [`${SANDBOX_BIN}/demo-agent.mjs`],
      programs: { "demo-agent.mjs": DEMO_AGENT_SCRIPT },
      passEnvPrefixes: ["ATELIER_DEMO_"],
      builtin: true,
    };
  }
  const [file, ...args] = command;
  if (!file) throw new Error("an agent command cannot be empty");
  return { file, args, sandboxFile: file, sandboxArgs: args, programs: {}, passEnvPrefixes: [], builtin: false };
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * Whether the sandbox can run `file`: a bare name must be on the system PATH, a path must be
 * under /usr or one of the roster's read-only paths. The sentence to show when it cannot.
 */
export function sandboxCommandProblem(file: string, readOnlyPaths: readonly string[]): string | null {
  if (!file.includes("/")) {
    return SANDBOX_PATH_DIRS.some((dir) => executable(join(dir, file)))
      ? null
      : `${file} is not installed where the sandbox can see it (${SANDBOX_PATH_DIRS.join(", ")}); install it there, or name its path and list its directory in the agent's read_only_paths`;
  }
  const visible = file === process.execPath || file.startsWith("/usr/") || readOnlyPaths.some((p) => file === p || file.startsWith(`${p.replace(/\/$/, "")}/`));
  if (!visible) return `${file} is outside the sandbox; list its directory in the agent's read_only_paths`;
  return executable(file) ? null : `${file} does not exist or is not executable`;
}
