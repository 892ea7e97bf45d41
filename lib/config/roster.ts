import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { z } from "zod";
import { BadInputError } from "../errors";
import { adapterFor } from "../executor/adapters";
import { inferAgentKind } from "../executor/adapters/kind";
import { AGENT_KINDS, type AgentKind } from "../executor/adapters/types";
import { DEFAULT_SANDBOX_LIMITS, parseEgressRule, type SandboxLimits } from "../executor/agent-sandbox/policy";
import type { ApiProtocol } from "../executor/agent-sandbox/usage-meter";
import type { ModelApiSpec, ToolApiSpec } from "../executor/agent-spec";
import { MODEL_API_PROTOCOLS, MODEL_KEY_NAMES } from "../executor/brokered-apis";
import { DEFAULT_REGISTRIES, DEFAULT_REGISTRIES_WORD, expandRegistries } from "../executor/environment/registries";
import { DEFAULT_TOOLCHAIN_ROOTS, locateToolchain, TOOLCHAIN_NAME, toolchainRootProblem, type Toolchain } from "../executor/environment/toolchains";
import { parseYamlWithLines } from "./yaml-lines";

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
  /** The wall-clock limit of one Attempt (default 60); null: unlimited (`max_attempt_minutes: unlimited`). */
  maxAttemptMinutes: number | null;
  /** Used to estimate cost when the agent reports none; null when unknown. */
  pricePerMinuteUsd: number | null;
  /** Names of environment variables passed from Atelier's environment to the agent (never a model key). */
  secrets: string[];
  /** The model API the egress gateway brokers (it adds the key) and meters; null: none. */
  modelApi: ModelApiSpec | null;
  /** Other tools' HTTP APIs the gateway brokers, adding their credential. */
  apis: ToolApiSpec[];
  /** Whether an operator may send input to a running Attempt. */
  intervene: boolean;
  /** How Atelier runs it and reads its output (default: from the command's program name). */
  kind: AgentKind;
  /** Non-secret environment values (base URLs, switches), shown as they are. */
  env: Record<string, string>;
  /** Models a Loop may pick from, besides `model`. */
  models: string[];
  /** Claude Code's --max-turns; null: its default. */
  maxTurns: number | null;
  /** Claude Code's --max-budget-usd: what one Attempt may spend, its child sessions included; null: no budget. */
  maxBudgetUsd: number | null;
  /**
   * Claude Code's --allowedTools: tools approved without asking. Under
   * --dangerously-skip-permissions every tool is approved already (the real CLI still offers
   * them all): take tools away with disallowedTools.
   */
  allowedTools: string[];
  /** Claude Code's --disallowedTools: these are not offered to the model at all. */
  disallowedTools: string[];
  /** Claude Code's --mcp-config: a file path, or the config as JSON text. */
  mcpConfig: string | null;
  /** Prices the tokens the gateway reads (or an agent reports without a cost); null when unknown. */
  pricePerMillionInputUsd: number | null;
  pricePerMillionOutputUsd: number | null;
  /** Cache tokens' prices; null: priced as input. */
  pricePerMillionCacheReadUsd: number | null;
  pricePerMillionCacheWriteUsd: number | null;
  /** Hosts its sandbox may reach (host, host:port, *.domain); none by default. */
  egress: string[];
  /** cgroup limits of its sandbox. */
  limits: SandboxLimits;
  /** Host paths bound read-only into its sandbox at the same path (tools outside /usr). */
  readOnlyPaths: string[];
  /**
   * Who may use this agent: installation account logins ("acme") and repositories
   * ("acme/api"), lower-cased, each resolved once to its GitHub id (ADR 0091); null (no
   * `allow:`) means every installation.
   */
  allow?: string[] | null;
}

export interface BoardLane {
  name: string;
  /** The label that puts an open Item in this lane; null for the catch-all lane. */
  label: string | null;
  /** "closed" lanes hold the closed (and merged) Items. */
  state: "open" | "closed";
  /**
   * An open lane that follows the work, whatever the labels: "running" takes the Items whose
   * Run is running, "review" those whose Run's pull request is open.
   */
  follows?: LaneWork;
}

export type LaneWork = "running" | "review";

export interface InstanceConfig {
  agents: Record<string, AgentSpec>;
  pollIntervalSeconds: number;
  maxConcurrentAttempts: number;
  /**
   * Slots held back from every concurrency cap an admin sets (an installation's or a
   * repository's max_concurrent) for other workloads: a cap of N lets N − reserve Runs run, and
   * never less than one. 0 (the default): none.
   */
  concurrencyReserve: number;
  /**
   * How long a worker's drain (SIGTERM) waits for its admitted Attempts: null, the longest
   * max_attempt_minutes of the roster — or 60 when an agent's is unlimited.
   */
  drainMinutes: number | null;
  /** GitHub logins, lower-cased. */
  admins: string[];
  board: { lanes: BoardLane[] };
  allowPrivateWebhookTargets: boolean;
  /** `off` runs agents without a sandbox (and the dashboard says so on every page). */
  sandbox: "on" | "off";
  /** What one Attempt's transcript keeps of the agent's output at most. */
  maxTranscriptBytes: number;
  /**
   * When set, only people of these accounts may sign in (lower-cased logins): a member of one of
   * these organizations (an installation of the App on it is visible to them), or the account itself.
   */
  allowedOrgs?: string[];
  /**
   * The hosts an environment's setup may reach (host, host:port, *.domain), `default` expanded;
   * absent: the public registries (DEFAULT_REGISTRIES). A repository never adds one.
   */
  registries?: string[];
  /**
   * Toolchains a repository's environment may pick by name (`toolchain: node-22`): folders under
   * the config's toolchain roots, mounted read-only with their bin on PATH. Absent: none.
   */
  toolchains?: Record<string, Toolchain>;
  /** How long history is kept whole (lib/retention, docs/operating.md), in days. */
  retention: RetentionDays;
  /** The file this came from; null for the built-in default. */
  source: string | null;
}

/** Days before retention prunes: a transcript to its summary, an Event's payload, an audit row, a delivery's log. */
export interface RetentionDays {
  transcripts: number;
  eventPayloads: number;
  audit: number;
  deliveries: number;
}

export const DEFAULT_RETENTION_DAYS: Readonly<RetentionDays> = Object.freeze({ transcripts: 90, eventPayloads: 90, audit: 365, deliveries: 30 });

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
  modelApi: null,
  apis: Object.freeze([]) as unknown as ToolApiSpec[],
  intervene: false,
  kind: "command",
  env: Object.freeze({}) as Record<string, string>,
  models: Object.freeze([]) as unknown as string[],
  maxTurns: null,
  maxBudgetUsd: null,
  allowedTools: Object.freeze([]) as unknown as string[],
  disallowedTools: Object.freeze([]) as unknown as string[],
  mcpConfig: null,
  pricePerMillionInputUsd: null,
  pricePerMillionOutputUsd: null,
  pricePerMillionCacheReadUsd: null,
  pricePerMillionCacheWriteUsd: null,
  egress: Object.freeze([]) as unknown as string[],
  limits: DEFAULT_SANDBOX_LIMITS,
  readOnlyPaths: Object.freeze([]) as unknown as string[],
});

export const DEFAULT_BOARD_LANES: readonly BoardLane[] = Object.freeze([
  { name: "Backlog", label: null, state: "open" },
  { name: "Ready for agent", label: "ready-for-agent", state: "open" },
  { name: "In progress", label: "agent-working", state: "open", follows: "running" },
  { name: "In review", label: "in-review", state: "open", follows: "review" },
  { name: "Done", label: null, state: "closed" },
] satisfies BoardLane[]);

export const DEFAULT_CONFIG_PATH = "atelier.config.yml";
const DEFAULT_MAX_ATTEMPT_MINUTES = 60;
/** What an Attempt's transcript keeps of the agent's output when the config says nothing (MB). */
export const DEFAULT_TRANSCRIPT_MB = 5;

const NAME = /^[a-z0-9][a-z0-9-_]{0,62}$/i;
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const GITHUB_LOGIN = /^[a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38}(?:\[bot\])?$/i;
const ALLOW_ENTRY = /^[a-z\d][a-z\d-]{0,38}(?:\/[a-z\d._-]{1,100})?$/i;
const HEADER_NAME = /^[A-Za-z0-9-]{1,64}$/;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Where the gateway may forward a brokered API: https, or plain http to a loopback address (a local stand-in). */
export function brokeredUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a URL";
  }
  if (url.username || url.password || url.search || url.hash) return "is a base URL: no user, password, query or fragment";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return "must be https:// (plain http:// only to a loopback address, e.g. a local stand-in)";
}

const brokeredUrl = z.string().superRefine((text, ctx) => {
  const problem = brokeredUrlProblem(text);
  if (problem) ctx.addIssue({ code: "custom", message: `the URL ${problem}` });
});
const secretName = z.string().regex(ENV_NAME, "a secret is the NAME of an environment variable (A-Z, 0-9, _), not its value");

const agentSchema = z.strictObject({
  command: z
    .array(z.string().min(1, "an argument of command is empty"), {
      error: "command must be a list of arguments (argv), e.g. [claude, -p]",
    })
    .min(1, "command must name a program, e.g. [claude, -p]"),
  model: z.string().min(1).optional(),
  max_attempt_minutes: z
    .union([z.number().positive("max_attempt_minutes must be above 0"), z.literal("unlimited")], {
      error: "max_attempt_minutes is a number of minutes above 0, or unlimited",
    })
    .optional(),
  price_per_minute_usd: z.number().nonnegative("price_per_minute_usd cannot be negative").optional(),
  secrets: z.array(secretName).optional(),
  model_api: z
    .strictObject({
      url: brokeredUrl,
      secret: secretName,
      protocol: z.enum(["anthropic", "openai"], { error: "protocol is anthropic or openai" }).optional(),
    })
    .optional(),
  apis: z
    .array(
      z.strictObject({
        url: brokeredUrl,
        secret: secretName,
        header: z.string().regex(HEADER_NAME, "header is the name of an HTTP header, e.g. authorization").optional(),
        scheme: z.string().regex(/^[A-Za-z0-9._~+/-]{1,32}$/, "scheme is one word, e.g. Bearer").nullable().optional(),
        env: z.string().regex(ENV_NAME, "env is the NAME of the variable the tool reads its base URL from"),
      }),
      { error: "apis is a list of { url, secret, env }" },
    )
    .optional(),
  intervene: z.boolean().optional(),
  kind: z.enum(AGENT_KINDS, { error: `kind is one of ${AGENT_KINDS.join(", ")}` }).optional(),
  env: z
    .record(z.string().regex(ENV_NAME), z.string({ error: 'an env value is text: quote it (e.g. "1")' }), {
      error: "env is a map of NAME: value",
    })
    .optional(),
  models: z.array(z.string().min(1, "a model name is empty"), { error: "models is a list of model names" }).optional(),
  max_turns: z.number().int("max_turns must be a whole number").min(1, "max_turns must be at least 1").optional(),
  max_budget_usd: z.number().positive("max_budget_usd must be above 0").optional(),
  allowed_tools: z.array(z.string().min(1, "a tool name is empty"), { error: "allowed_tools is a list of tool names, e.g. [Bash, Edit]" }).optional(),
  disallowed_tools: z.array(z.string().min(1, "a tool name is empty"), { error: "disallowed_tools is a list of tool names, e.g. [WebFetch]" }).optional(),
  mcp_config: z
    .union([z.string().min(1), z.record(z.string(), z.unknown())], { error: "mcp_config is a path to a JSON file, or the config as a map (mcpServers: …)" })
    .optional(),
  price_per_million_input_usd: z.number().nonnegative("price_per_million_input_usd cannot be negative").optional(),
  price_per_million_output_usd: z.number().nonnegative("price_per_million_output_usd cannot be negative").optional(),
  price_per_million_cache_read_usd: z.number().nonnegative("price_per_million_cache_read_usd cannot be negative").optional(),
  price_per_million_cache_write_usd: z.number().nonnegative("price_per_million_cache_write_usd cannot be negative").optional(),
  egress: z
    .array(
      z.string().refine((e) => parseEgressRule(e) !== null, {
        message: "an egress entry is a host, host:port or *.domain (e.g. api.anthropic.com, 127.0.0.1:8080)",
      }),
    )
    .optional(),
  limits: z
    .strictObject({
      memory_mb: z.number().int().min(64, "limits.memory_mb is at least 64").optional(),
      pids: z.number().int().min(16, "limits.pids is at least 16").optional(),
      cpus: z.number().positive("limits.cpus must be above 0").optional(),
      disk_mb: z.number().int().min(64, "limits.disk_mb is at least 64").optional(),
    })
    .optional(),
  read_only_paths: z.array(z.string().regex(/^\/[^\0]*$/, "a read-only path is an absolute path")).optional(),
  allow: z
    .array(z.string().regex(ALLOW_ENTRY, "an allow entry is an installation's account login (acme) or a repository (acme/api)"))
    .optional(),
});

/** The protocol of a kind's model API; a plain command names its own. */
const KIND_PROTOCOL: Record<AgentKind, ApiProtocol | undefined> = { claude: "anthropic", codex: "openai", command: undefined };

/** Settings only Claude Code has. */
const CLAUDE_ONLY = ["max_turns", "allowed_tools", "disallowed_tools", "mcp_config"] as const;
/** env: is shown as it is: a name like these belongs under secrets:. */
export const SECRET_LIKE = /(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)$|API_KEY|PRIVATE/;
/** Set by Atelier for every agent. */
const RESERVED_ENV = /^(?:ATELIER_|GIT_)|^(?:PATH|HOME|LANG)$/;

const laneSchema = z.strictObject({
  name: z.string().min(1, "a lane needs a name"),
  label: z.string().min(1).max(50).nullable().optional(),
  state: z.enum(["open", "closed"]).optional(),
  follows: z.enum(["running", "review"]).optional(),
});

const retentionDays = (what: string) => z.number().int(`${what} is a whole number of days`).min(1, `${what} is at least 1 day`).max(36_500, `${what} is at most 36500 days`).optional();

const retentionSchema = z.strictObject({
  transcripts_days: retentionDays("transcripts_days"),
  event_payloads_days: retentionDays("event_payloads_days"),
  audit_days: retentionDays("audit_days"),
  deliveries_days: retentionDays("deliveries_days"),
});

const instanceSchema = z.strictObject({
  agents: z
    .record(z.string().regex(NAME), agentSchema)
    .optional(),
  poll_interval_seconds: z.number().int("poll_interval_seconds must be a whole number").min(1).optional(),
  max_concurrent_attempts: z.number().int("max_concurrent_attempts must be a whole number").min(1).optional(),
  drain_minutes: z.number().positive("drain_minutes must be above 0").optional(),
  concurrency_reserve: z
    .number({ error: "concurrency_reserve is a number of Runs, e.g. 1" })
    .int("concurrency_reserve must be a whole number")
    .min(0, "concurrency_reserve cannot be negative")
    .optional(),
  admins: z.array(z.string().regex(GITHUB_LOGIN, "an admin is a GitHub login")).optional(),
  board: z.strictObject({ lanes: z.array(laneSchema).min(1, "the board needs at least one lane") }).optional(),
  allow_private_webhook_targets: z.boolean().optional(),
  sandbox: z.enum(["on", "off"], { error: "sandbox is on (the default) or off" }).optional(),
  max_transcript_mb: z.number().positive("max_transcript_mb must be above 0").max(1024, "max_transcript_mb is at most 1024").optional(),
  allowed_orgs: z.array(z.string().regex(GITHUB_LOGIN, "an allowed org is a GitHub organization's login")).optional(),
  registries: z
    .array(
      z.string().refine((e) => e === DEFAULT_REGISTRIES_WORD || parseEgressRule(e) !== null, {
        message: "a registry is a host, host:port or *.domain (e.g. registry.npmjs.org, 127.0.0.1:4873), or default (the public registries)",
      }),
      { error: "registries is a list of hosts, e.g. [default, npm.internal.example.com]" },
    )
    .optional(),
  toolchain_roots: z
    .array(z.string().min(1), { error: "toolchain_roots is a list of folders, e.g. [/opt/atelier/toolchains]" })
    .min(1, "toolchain_roots lists at least one folder")
    .optional(),
  toolchains: z
    .record(z.string().regex(TOOLCHAIN_NAME), z.string({ error: "a toolchain is the path of its folder, e.g. node-22: /opt/atelier/toolchains/node-22" }), {
      error: "toolchains is a map of name: folder, e.g. { node-22: /opt/atelier/toolchains/node-22 }",
    })
    .optional(),
  retention: retentionSchema.optional(),
});

/** The config used when there is no file: the demo agent and the defaults. */
export function defaultInstanceConfig(): InstanceConfig {
  return {
    agents: { demo: { ...DEMO_AGENT, command: [...DEMO_AGENT.command], secrets: [] } },
    pollIntervalSeconds: 60,
    maxConcurrentAttempts: 2,
    concurrencyReserve: 0,
    drainMinutes: null,
    admins: [],
    board: { lanes: DEFAULT_BOARD_LANES.map((l) => ({ ...l })) },
    allowPrivateWebhookTargets: false,
    sandbox: "on",
    maxTranscriptBytes: DEFAULT_TRANSCRIPT_MB * 1024 * 1024,
    retention: { ...DEFAULT_RETENTION_DAYS },
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
                ? path[0] === "toolchains"
                  ? "a toolchain name is letters, digits, ., - and _, starting with a letter or digit (at most 63)"
                  : path.length <= 2
                  ? "an agent name is letters, digits, - and _, starting with a letter or digit (at most 63)"
                  : "an env name is the NAME of a variable (A-Z, 0-9, _), e.g. ANTHROPIC_BASE_URL"
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
    ? cfg.board.lanes.map((l) => ({ name: l.name, label: l.label ?? null, state: l.state ?? "open", ...(l.follows ? { follows: l.follows } : {}) }))
    : defaults.board.lanes;
  const seenLanes = new Set<string>();
  const seenLabels = new Set<string>();
  const seenFollows = new Set<LaneWork>();
  lanes.forEach((lane, i) => {
    if (lane.follows) {
      const where = `board.lanes.${i}.follows (line ${yaml.lineOf(["board", "lanes", i, "follows"])})`;
      if (lane.state === "closed") problems.push(`${where}: a closed lane holds the closed Items; only an open lane follows the work`);
      if (seenFollows.has(lane.follows)) problems.push(`${where}: two lanes follow "${lane.follows}"`);
      seenFollows.add(lane.follows);
    }
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
    const kind = a.kind ?? inferAgentKind(a.command);
    const protocol = a.model_api ? (a.model_api.protocol ?? KIND_PROTOCOL[kind]) : undefined;
    agents[name] = {
      name,
      command: a.command,
      model: a.model ?? null,
      maxAttemptMinutes: a.max_attempt_minutes === "unlimited" ? null : (a.max_attempt_minutes ?? DEFAULT_MAX_ATTEMPT_MINUTES),
      pricePerMinuteUsd: a.price_per_minute_usd ?? null,
      secrets: a.secrets ?? [],
      modelApi: a.model_api && protocol ? { url: a.model_api.url, secret: a.model_api.secret, protocol } : null,
      apis: (a.apis ?? []).map((api) => ({
        url: api.url,
        secret: api.secret,
        header: (api.header ?? "authorization").toLowerCase(),
        scheme: api.scheme === undefined ? "Bearer" : api.scheme,
        env: api.env,
      })),
      intervene: a.intervene ?? false,
      kind,
      env: a.env ?? {},
      models: a.models ?? [],
      maxTurns: a.max_turns ?? null,
      maxBudgetUsd: a.max_budget_usd ?? null,
      allowedTools: a.allowed_tools ?? [],
      disallowedTools: a.disallowed_tools ?? [],
      mcpConfig: a.mcp_config === undefined ? null : typeof a.mcp_config === "string" ? a.mcp_config : JSON.stringify(a.mcp_config),
      pricePerMillionInputUsd: a.price_per_million_input_usd ?? null,
      pricePerMillionOutputUsd: a.price_per_million_output_usd ?? null,
      pricePerMillionCacheReadUsd: a.price_per_million_cache_read_usd ?? null,
      pricePerMillionCacheWriteUsd: a.price_per_million_cache_write_usd ?? null,
      egress: a.egress ?? [],
      limits: {
        memoryMb: a.limits?.memory_mb ?? DEFAULT_SANDBOX_LIMITS.memoryMb,
        pids: a.limits?.pids ?? DEFAULT_SANDBOX_LIMITS.pids,
        cpus: a.limits?.cpus ?? DEFAULT_SANDBOX_LIMITS.cpus,
        diskMb: a.limits?.disk_mb ?? DEFAULT_SANDBOX_LIMITS.diskMb,
      },
      readOnlyPaths: a.read_only_paths ?? [],
      ...(a.allow ? { allow: a.allow.map((e) => e.toLowerCase()) } : {}),
    };
    problems.push(...agentProblems(agents[name]!, a, (path) => yaml.lineOf(["agents", name, ...path])));
  }
  const toolchains = cfg.toolchains || cfg.toolchain_roots ? parseToolchains(cfg.toolchains ?? {}, cfg.toolchain_roots, yaml.lineOf, problems) : null;
  if (problems.length) fail(problems);
  return {
    agents: cfg.agents ? agents : defaults.agents,
    pollIntervalSeconds: cfg.poll_interval_seconds ?? defaults.pollIntervalSeconds,
    maxConcurrentAttempts: cfg.max_concurrent_attempts ?? defaults.maxConcurrentAttempts,
    concurrencyReserve: cfg.concurrency_reserve ?? defaults.concurrencyReserve,
    drainMinutes: cfg.drain_minutes ?? defaults.drainMinutes,
    admins: (cfg.admins ?? []).map((a) => a.toLowerCase()),
    board: { lanes },
    allowPrivateWebhookTargets: cfg.allow_private_webhook_targets ?? false,
    sandbox: cfg.sandbox ?? "on",
    maxTranscriptBytes: Math.round((cfg.max_transcript_mb ?? DEFAULT_TRANSCRIPT_MB) * 1024 * 1024),
    ...(cfg.allowed_orgs ? { allowedOrgs: cfg.allowed_orgs.map((o) => o.toLowerCase()) } : {}),
    ...(cfg.registries ? { registries: expandRegistries(cfg.registries) } : {}),
    ...(toolchains ? { toolchains } : {}),
    retention: {
      transcripts: cfg.retention?.transcripts_days ?? DEFAULT_RETENTION_DAYS.transcripts,
      eventPayloads: cfg.retention?.event_payloads_days ?? DEFAULT_RETENTION_DAYS.eventPayloads,
      audit: cfg.retention?.audit_days ?? DEFAULT_RETENTION_DAYS.audit,
      deliveries: cfg.retention?.deliveries_days ?? DEFAULT_RETENTION_DAYS.deliveries,
    },
    source,
  };
}

/** `toolchains:` under `toolchain_roots:` (default DEFAULT_TOOLCHAIN_ROOTS): each path inside a root, no link out of it. */
function parseToolchains(
  raw: Record<string, string>,
  rawRoots: string[] | undefined,
  lineOf: (path: (string | number)[]) => number | null | undefined,
  problems: string[],
): Record<string, Toolchain> {
  const at = (path: (string | number)[]) => {
    const line = lineOf(path);
    return `${path.join(".")}${line ? ` (line ${line})` : ""}`;
  };
  const roots = rawRoots ?? DEFAULT_TOOLCHAIN_ROOTS;
  const before = problems.length;
  (rawRoots ?? []).forEach((root, i) => {
    const problem = toolchainRootProblem(root);
    if (problem) problems.push(`${at(["toolchain_roots", i])}: the toolchain root ${root} ${problem}`);
  });
  const out: Record<string, Toolchain> = {};
  if (problems.length > before) return out;
  for (const [name, path] of Object.entries(raw)) {
    const found = locateToolchain(path, roots);
    if ("problem" in found) problems.push(`${at(["toolchains", name])}: the toolchain ${name} (${path}) ${found.problem}`);
    else out[name] = { name, path: resolve(path), root: found.root };
  }
  return out;
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

/** The hosts an environment's setup may reach on this instance. */
export function registryAllowlist(config: Pick<InstanceConfig, "registries">): readonly string[] {
  return config.registries ?? DEFAULT_REGISTRIES;
}

/** Every variable of Atelier's environment an agent's entry names: passed to it, or added by the gateway for it. */
export function agentSecretNames(agent: Pick<AgentSpec, "secrets" | "modelApi" | "apis">): string[] {
  return [...agent.secrets, ...(agent.modelApi ? [agent.modelApi.secret] : []), ...agent.apis.map((a) => a.secret)];
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

/** The GitHub ids an agent's `allow:` names (ADR 0091): each entry resolved once (lib/auth/roster-allow.ts). */
export interface AllowIds {
  accounts: ReadonlySet<string>;
  repositories: ReadonlySet<string>;
}

/**
 * Whether an agent's resolved `allow:` lets a repository use it: the repository's id, or its
 * owner's account id (its installation's), must be among them — never its name. The tenant
 * boundary of an agent, its secrets and its budget.
 */
export function agentAllows(allow: AllowIds, repo: { id: string; ownerId: string | null }): boolean {
  return allow.repositories.has(repo.id) || (repo.ownerId !== null && allow.accounts.has(repo.ownerId));
}

/** The sentence of a refusal by `allow:`, the same at every door. */
export function agentNotAllowedMessage(agent: string, repo: string): string {
  return `The agent "${agent}" is not allowed for ${repo.toLowerCase()}: the instance's roster (atelier.config.yml, agents.${agent}.allow) lists the installations and repositories that may use it; pick another agent or ask the instance's admin.`;
}

/** True when `agent` is the built-in demo agent (the executor runs it in-process). */
export function isDemoAgent(agent: Pick<AgentSpec, "command">): boolean {
  return agent.command.length === 1 && agent.command[0] === DEMO_AGENT_COMMAND;
}

/** What the schema cannot say of one agent: the settings of its kind, env names, its argv. */
function agentProblems(spec: AgentSpec, raw: z.infer<typeof agentSchema>, lineOf: (path: (string | number)[]) => number | null | undefined): string[] {
  const problems: string[] = [];
  const at = (path: (string | number)[]) => {
    const line = lineOf(path);
    return `agents.${[spec.name, ...path].join(".")}${line ? ` (line ${line})` : ""}`;
  };
  if (spec.kind !== "claude") {
    for (const key of CLAUDE_ONLY) {
      if (raw[key] !== undefined) problems.push(`${at([key])}: ${key} is a Claude Code setting (kind: claude); kind ${spec.kind} has no such option`);
    }
  }
  if (spec.kind === "codex" && spec.intervene) {
    problems.push(`${at(["intervene"])}: codex exec takes no input while it runs: intervene must be false for kind: codex`);
  }
  problems.push(...brokeredProblems(spec, raw, at));
  const secrets = new Set(spec.secrets);
  for (const name of Object.keys(spec.env)) {
    if (secrets.has(name)) problems.push(`${at(["env", name])}: ${name} is also listed in secrets: keep it in one of them`);
    else if (SECRET_LIKE.test(name)) {
      problems.push(`${at(["env", name])}: ${name} looks like a secret, and env: values are shown as they are: put its NAME under secrets: and its value in Atelier's environment`);
    }
    if (RESERVED_ENV.test(name)) problems.push(`${at(["env", name])}: ${name} is set by Atelier for every agent`);
  }
  if ((spec.pricePerMillionInputUsd === null) !== (spec.pricePerMillionOutputUsd === null)) {
    const missing = spec.pricePerMillionInputUsd === null ? "price_per_million_input_usd" : "price_per_million_output_usd";
    const given = missing === "price_per_million_input_usd" ? "price_per_million_output_usd" : "price_per_million_input_usd";
    problems.push(`${at([given])}: give ${missing} too (tokens are priced with both)`);
  }
  if (problems.length === 0 && !isDemoAgent(spec)) {
    // the adapter derives or checks the argv: a command it cannot run is refused here, not at the first Attempt
    try {
      adapterFor(spec.kind).invocation(spec, { prompt: "" });
    } catch (err) {
      problems.push(`${at(["command"])}: ${(err as Error).message.replace(/^agent [^:]+: /, "")}`);
    }
  }
  return problems;
}

/** What the schema cannot say of the APIs the gateway brokers, and of the keys an agent would hold. */
function brokeredProblems(spec: AgentSpec, raw: z.infer<typeof agentSchema>, at: (path: (string | number)[]) => string): string[] {
  const problems: string[] = [];
  spec.secrets.forEach((name, i) => {
    if (MODEL_KEY_NAMES.includes(name)) {
      problems.push(`${at(["secrets", i])}: ${name} is a model key, and an agent must never hold one: name it in model_api: { url, secret: ${name} } and the egress gateway adds it to the agent's requests`);
    }
  });
  const given = new Map<string, (string | number)[]>();
  const claim = (name: string, path: (string | number)[]) => {
    if (given.has(name)) problems.push(`${at(path)}: ${name} is already set by ${given.get(name)!.join(".")}`);
    else given.set(name, path);
  };
  if (raw.model_api) {
    const protocol = raw.model_api.protocol ?? KIND_PROTOCOL[spec.kind];
    if (!protocol) problems.push(`${at(["model_api"])}: say which API it is: protocol: anthropic or openai`);
    else if (KIND_PROTOCOL[spec.kind] && KIND_PROTOCOL[spec.kind] !== protocol) {
      problems.push(`${at(["model_api", "protocol"])}: kind ${spec.kind} speaks ${KIND_PROTOCOL[spec.kind]}, not ${protocol}`);
    }
    if (spec.pricePerMillionInputUsd === null || spec.pricePerMillionOutputUsd === null) {
      problems.push(`${at(["model_api"])}: give price_per_million_input_usd and price_per_million_output_usd: the gateway counts the tokens, the roster prices them`);
    }
    if (protocol) {
      const facts = MODEL_API_PROTOCOLS[protocol];
      claim(facts.baseUrlEnv, ["model_api"]);
      claim(facts.keyEnv, ["model_api"]);
    }
  }
  spec.apis.forEach((api, i) => {
    if (RESERVED_ENV.test(api.env)) problems.push(`${at(["apis", i, "env"])}: ${api.env} is set by Atelier for every agent`);
    else claim(api.env, ["apis", i, "env"]);
  });
  for (const name of [...Object.keys(spec.env), ...spec.secrets]) {
    if (given.has(name)) problems.push(`${at(spec.secrets.includes(name) ? ["secrets"] : ["env", name])}: ${name} is set by ${given.get(name)!.join(".")}: keep it there`);
  }
  return problems;
}

function allowedKeys(path: (string | number)[]): string[] {
  if (path.length === 0) return Object.keys(instanceSchema.shape);
  if (path[0] === "agents" && path.length === 2) return Object.keys(agentSchema.shape);
  if (path[0] === "agents" && path[2] === "limits" && path.length === 3) return ["memory_mb", "pids", "cpus", "disk_mb"];
  if (path[0] === "agents" && path[2] === "model_api" && path.length === 3) return ["url", "secret", "protocol"];
  if (path[0] === "agents" && path[2] === "apis" && path.length === 4) return ["url", "secret", "header", "scheme", "env"];
  if (path[0] === "board" && path.length === 1) return ["lanes"];
  if (path[0] === "retention" && path.length === 1) return Object.keys(retentionSchema.shape);
  if (path[0] === "board" && path.length === 3) return Object.keys(laneSchema.shape);
  return [];
}
