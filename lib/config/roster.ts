import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { z } from "zod";
import { BadInputError } from "../errors";
import { parseYamlWithLines } from "../loops/yaml-lines";

/**
 * The instance's config: the Agent roster and the settings of this deployment. It lives in the
 * deployment's `atelier.config.yml` (or the file ATELIER_CONFIG names), never in a repository:
 * a repository picks an Agent by name and can never define a command.
 */

export interface AgentSpec {
  name: string;
  /** argv; never run through a shell. */
  command: string[];
  model: string | null;
  /** The wall-clock limit of one Attempt (default 60). */
  maxAttemptMinutes: number;
  /** Used to estimate cost when the agent reports none; null when unknown. */
  pricePerMinuteUsd: number | null;
  /** Names of environment variables passed from Atelier's environment to the agent. */
  secrets: string[];
  /** Whether an operator may send input to a running Attempt. */
  intervene: boolean;
  /**
   * Who may use this agent: installation account logins ("acme") and repositories
   * ("acme/api"), lower-cased; null (no `allow:`) means every installation.
   */
  allow?: string[] | null;
}

export interface BoardLane {
  name: string;
  /** The label that puts an open Item in this lane; null for the catch-all lane. */
  label: string | null;
  /** "closed" lanes hold the closed (and merged) Items. */
  state: "open" | "closed";
}

export interface InstanceConfig {
  agents: Record<string, AgentSpec>;
  pollIntervalSeconds: number;
  maxConcurrentAttempts: number;
  /** GitHub logins, lower-cased. */
  admins: string[];
  board: { lanes: BoardLane[] };
  allowPrivateWebhookTargets: boolean;
  /**
   * When set, only people of these accounts may sign in (lower-cased logins): a member of one of
   * these organizations (an installation of the App on it is visible to them), or the account itself.
   */
  allowedOrgs?: string[];
  /** The file this came from; null for the built-in default. */
  source: string | null;
}

/** The command marker the executor recognises as the built-in demo agent. */
export const DEMO_AGENT_COMMAND = "atelier-demo-agent";

/** The built-in demo agent: a small deterministic commit, for the sandbox and the tests. */
export const DEMO_AGENT: AgentSpec = Object.freeze({
  name: "demo",
  command: Object.freeze([DEMO_AGENT_COMMAND]) as unknown as string[],
  model: null,
  maxAttemptMinutes: 5,
  pricePerMinuteUsd: null,
  secrets: Object.freeze([]) as unknown as string[],
  intervene: false,
});

export const DEFAULT_BOARD_LANES: readonly BoardLane[] = Object.freeze([
  { name: "Backlog", label: null, state: "open" },
  { name: "Ready for agent", label: "ready-for-agent", state: "open" },
  { name: "In progress", label: "agent-working", state: "open" },
  { name: "In review", label: "in-review", state: "open" },
  { name: "Done", label: null, state: "closed" },
] satisfies BoardLane[]);

export const DEFAULT_CONFIG_PATH = "atelier.config.yml";
const DEFAULT_MAX_ATTEMPT_MINUTES = 60;

const NAME = /^[a-z0-9][a-z0-9-_]{0,62}$/i;
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const GITHUB_LOGIN = /^[a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38}(?:\[bot\])?$/i;
const ALLOW_ENTRY = /^[a-z\d][a-z\d-]{0,38}(?:\/[a-z\d._-]{1,100})?$/i;

const agentSchema = z.strictObject({
  command: z
    .array(z.string().min(1, "an argument of command is empty"), {
      error: "command must be a list of arguments (argv), e.g. [claude, -p]",
    })
    .min(1, "command must name a program, e.g. [claude, -p]"),
  model: z.string().min(1).optional(),
  max_attempt_minutes: z.number().positive("max_attempt_minutes must be above 0").optional(),
  price_per_minute_usd: z.number().nonnegative("price_per_minute_usd cannot be negative").optional(),
  secrets: z
    .array(z.string().regex(ENV_NAME, "a secret is the NAME of an environment variable (A-Z, 0-9, _), not its value"))
    .optional(),
  intervene: z.boolean().optional(),
  allow: z
    .array(z.string().regex(ALLOW_ENTRY, "an allow entry is an installation's account login (acme) or a repository (acme/api)"))
    .optional(),
});

const laneSchema = z.strictObject({
  name: z.string().min(1, "a lane needs a name"),
  label: z.string().min(1).max(50).nullable().optional(),
  state: z.enum(["open", "closed"]).optional(),
});

const instanceSchema = z.strictObject({
  agents: z
    .record(z.string().regex(NAME), agentSchema)
    .optional(),
  poll_interval_seconds: z.number().int("poll_interval_seconds must be a whole number").min(1).optional(),
  max_concurrent_attempts: z.number().int("max_concurrent_attempts must be a whole number").min(1).optional(),
  admins: z.array(z.string().regex(GITHUB_LOGIN, "an admin is a GitHub login")).optional(),
  board: z.strictObject({ lanes: z.array(laneSchema).min(1, "the board needs at least one lane") }).optional(),
  allow_private_webhook_targets: z.boolean().optional(),
  allowed_orgs: z.array(z.string().regex(GITHUB_LOGIN, "an allowed org is a GitHub organization's login")).optional(),
});

/** The config used when there is no file: the demo agent and the defaults. */
export function defaultInstanceConfig(): InstanceConfig {
  return {
    agents: { demo: { ...DEMO_AGENT, command: [...DEMO_AGENT.command], secrets: [] } },
    pollIntervalSeconds: 60,
    maxConcurrentAttempts: 2,
    admins: [],
    board: { lanes: DEFAULT_BOARD_LANES.map((l) => ({ ...l })) },
    allowPrivateWebhookTargets: false,
    source: null,
  };
}

/**
 * Parses the instance config's YAML text. Throws BadInputError `instance_config_invalid` whose
 * message names every offending key with its line.
 */
export function parseInstanceConfig(text: string, source: string = DEFAULT_CONFIG_PATH): InstanceConfig {
  const yaml = parseYamlWithLines(text);
  const fail = (problems: string[]): never => {
    throw new BadInputError(
      "instance_config_invalid",
      `${source} is not valid: ${problems.join("; ")}.`,
      { source, problems },
    );
  };
  if (yaml.errors.length) fail(yaml.errors.map((e) => e.message.replace(/\.$/, "")));
  const raw = yaml.value ?? {};
  if (typeof raw !== "object" || Array.isArray(raw)) fail(["the file must be a map of settings (agents:, admins:, ...)"]);

  const parsed = instanceSchema.safeParse(raw);
  if (!parsed.success) {
    fail(
      parsed.error.issues.flatMap((issue) => {
        const paths =
          issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
        return paths.map((path) => {
          const where = path.length ? path.map(String).join(".") : "(top level)";
          const line = yaml.lineOf(path as (string | number)[]);
          const what =
            issue.code === "unrecognized_keys"
              ? `unknown key (allowed here: ${allowedKeys(issue.path as (string | number)[]).join(", ")})`
              : issue.code === "invalid_key"
                ? "an agent name is letters, digits, - and _, starting with a letter or digit (at most 63)"
                : issue.message;
          return `${where}${line ? ` (line ${line})` : ""}: ${what}`;
        });
      }),
    );
  }
  const cfg = parsed.data!;
  const defaults = defaultInstanceConfig();

  const problems: string[] = [];
  const lanes: BoardLane[] = cfg.board
    ? cfg.board.lanes.map((l) => ({ name: l.name, label: l.label ?? null, state: l.state ?? "open" }))
    : defaults.board.lanes;
  const seenLanes = new Set<string>();
  const seenLabels = new Set<string>();
  lanes.forEach((lane, i) => {
    if (seenLanes.has(lane.name.toLowerCase())) {
      problems.push(`board.lanes.${i}.name (line ${yaml.lineOf(["board", "lanes", i])}): the lane "${lane.name}" is listed twice`);
    }
    seenLanes.add(lane.name.toLowerCase());
    if (lane.label) {
      if (seenLabels.has(lane.label.toLowerCase())) {
        problems.push(`board.lanes.${i}.label (line ${yaml.lineOf(["board", "lanes", i])}): the label "${lane.label}" is used by two lanes`);
      }
      seenLabels.add(lane.label.toLowerCase());
    }
  });
  if (problems.length) fail(problems);

  const agents: Record<string, AgentSpec> = {};
  for (const [name, a] of Object.entries(cfg.agents ?? {})) {
    agents[name] = {
      name,
      command: a.command,
      model: a.model ?? null,
      maxAttemptMinutes: a.max_attempt_minutes ?? DEFAULT_MAX_ATTEMPT_MINUTES,
      pricePerMinuteUsd: a.price_per_minute_usd ?? null,
      secrets: a.secrets ?? [],
      intervene: a.intervene ?? false,
      ...(a.allow ? { allow: a.allow.map((e) => e.toLowerCase()) } : {}),
    };
  }
  return {
    agents: cfg.agents ? agents : defaults.agents,
    pollIntervalSeconds: cfg.poll_interval_seconds ?? defaults.pollIntervalSeconds,
    maxConcurrentAttempts: cfg.max_concurrent_attempts ?? defaults.maxConcurrentAttempts,
    admins: (cfg.admins ?? []).map((a) => a.toLowerCase()),
    board: { lanes },
    allowPrivateWebhookTargets: cfg.allow_private_webhook_targets ?? false,
    ...(cfg.allowed_orgs ? { allowedOrgs: cfg.allowed_orgs.map((o) => o.toLowerCase()) } : {}),
    source,
  };
}

/**
 * Loads the instance config from `path`, else ATELIER_CONFIG, else ./atelier.config.yml. When
 * the default file does not exist, the built-in default (the demo agent only) is used; a path
 * that was asked for explicitly must exist.
 */
export async function loadInstanceConfig(
  path?: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<InstanceConfig> {
  const explicit = path ?? (env.ATELIER_CONFIG || undefined);
  const file = resolve(cwd, explicit ?? DEFAULT_CONFIG_PATH);
  let text: string;
  try {
    text = await readFile(/* turbopackIgnore: true */ file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      if (!explicit) return defaultInstanceConfig();
      throw new BadInputError(
        "instance_config_missing",
        `The instance config ${file} does not exist: create it (see atelier.config.example.yml) or fix ${path ? "the path" : "ATELIER_CONFIG"}.`,
        { source: file },
      );
    }
    throw err;
  }
  return parseInstanceConfig(text, file);
}

/** The agent's secrets read from `env`: the values to pass, and the names that are not set. */
export function agentSecretEnv(
  agent: AgentSpec,
  env: NodeJS.ProcessEnv = process.env,
): { env: Record<string, string>; missing: string[] } {
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of agent.secrets) {
    const value = env[name];
    if (value === undefined || value === "") missing.push(name);
    else out[name] = value;
  }
  return { env: out, missing };
}

/**
 * Whether the roster lets `repo` (owner/name) use the agent: no `allow:` lets every
 * installation; otherwise the repository's installation account (its owner) or the repository
 * itself must be listed. The tenant boundary of an agent, its secrets and its budget.
 */
export function agentAllows(agent: Pick<AgentSpec, "allow">, repo: string): boolean {
  if (!agent.allow) return true;
  const fullName = repo.toLowerCase();
  const owner = fullName.split("/")[0]!;
  return agent.allow.includes(owner) || agent.allow.includes(fullName);
}

/** The sentence of a refusal by `allow:`, the same at every door. */
export function agentNotAllowedMessage(agent: string, repo: string): string {
  return `The agent "${agent}" is not allowed for ${repo.toLowerCase()}: the instance's roster (atelier.config.yml, agents.${agent}.allow) lists the installations and repositories that may use it; pick another agent or ask the instance's admin.`;
}

/** True when `agent` is the built-in demo agent (the executor runs it in-process). */
export function isDemoAgent(agent: Pick<AgentSpec, "command">): boolean {
  return agent.command.length === 1 && agent.command[0] === DEMO_AGENT_COMMAND;
}

function allowedKeys(path: (string | number)[]): string[] {
  if (path.length === 0) return Object.keys(instanceSchema.shape);
  if (path[0] === "agents" && path.length === 2) return Object.keys(agentSchema.shape);
  if (path[0] === "board" && path.length === 1) return ["lanes"];
  if (path[0] === "board" && path.length === 3) return Object.keys(laneSchema.shape);
  return [];
}
