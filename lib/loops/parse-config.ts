import { agentAllows, agentNotAllowedMessage, type InstanceConfig } from "../config/roster";
import {
  CONFIG_PATH,
  DEFAULT_MAX_CHAIN_DEPTH,
  DEFAULT_MAX_CYCLES,
  DEFAULT_TRIGGER_PERMISSION,
  DEFAULT_TIME_ZONE,
  LABEL_COLOR,
  LABEL_DESCRIPTION_MAX,
  LABEL_KEYS,
  LABEL_NAME_MAX,
  LOOP_KEYS,
  LOOP_NAME,
  loopSchema,
  REPOSITORY_FULL_NAME,
  SCHEDULE_KEYS,
  COMMENTS_KEYS,
  TOP_LEVEL_KEYS,
  type LabelSpec,
  type LoopConfigError,
  type LoopConfigErrorToken,
  type LoopDefinition,
  type LoopTrigger,
  type RepositoryConfig,
} from "./config-schema";
import { compileCondition, compileTemplate, ExpressionSyntaxError } from "./expressions";
import { validateCron, validateTimeZone } from "./schedule";
import { parseYamlWithLines } from "./yaml-lines";

type Path = (string | number)[];

export interface ValidateRepositoryConfigOptions {
  /** The instance's roster: a Loop may only name one of its agents. */
  roster: Pick<InstanceConfig, "agents">;
  /** The 1-based line of the value at a path of the config, when the source is known. */
  lineOf?: (path: Path) => number | null;
  /**
   * The repository whose config this is, and the repositories of its installation: a Loop may
   * only act there (`repositories:`), with an agent the roster allows there (`allow:`). Unknown
   * (a config checked on its own) skips both checks.
   */
  tenant?: ConfigTenant;
}

export interface ConfigTenant {
  /** owner/name of the declaring repository */
  repo: string;
  /** owner/name of every repository of the declaring repository's installation, lower-cased */
  installationRepos: readonly string[];
}

/**
 * Parses and validates the text of `.github/atelier.yml`. Never throws: YAML that does not parse
 * is one file-level `config_invalid_yaml` error; every other problem is an error on its Loop
 * (or on the file for top-level keys and labels), with its line.
 */
export function parseRepositoryConfig(
  yamlText: string,
  options: Omit<ValidateRepositoryConfigOptions, "lineOf">,
): RepositoryConfig {
  const yaml = parseYamlWithLines(yamlText);
  if (yaml.errors.length) {
    return {
      labels: [],
      loops: [],
      errors: yaml.errors.map((e) => ({
        loop: null,
        token: "config_invalid_yaml",
        line: e.line,
        message: e.message,
        path: "",
      })),
    };
  }
  const value = yaml.value;
  // A color of digits only (000000, 123456) reads as a number: take it as it was written.
  if (isRecord(value) && Array.isArray(value.labels)) {
    value.labels.forEach((label, i) => {
      if (isRecord(label) && typeof label.color === "number") {
        const source = yaml.sourceOf(["labels", i, "color"]);
        if (source !== null) label.color = source;
      }
    });
  }
  return validateRepositoryConfig(value, { ...options, lineOf: yaml.lineOf });
}

/**
 * Validates a config object already parsed (e.g. by Probot's config loader, `_extends` merged).
 * Returns the labels, the valid Loops, and one error per problem; never throws.
 */
export function validateRepositoryConfig(config: unknown, options: ValidateRepositoryConfigOptions): RepositoryConfig {
  const lineOf = options.lineOf ?? (() => null);
  const errors: LoopConfigError[] = [];
  const report = (loop: string | null, token: LoopConfigErrorToken, path: Path, message: string) => {
    errors.push({ loop, token, line: lineOf(path), message, path: path.map(String).join(".") });
  };
  const result: RepositoryConfig = { labels: [], loops: [], errors };
  if (config === null || config === undefined) return result;
  if (!isRecord(config)) {
    report(null, "config_invalid", [], `${CONFIG_PATH} must be a map with the keys labels: and loops:.`);
    return result;
  }

  for (const key of Object.keys(config)) {
    if ((TOP_LEVEL_KEYS as readonly string[]).includes(key)) continue;
    report(null, "config_unknown_key", [key], unknownTopLevelKey(key));
  }

  result.labels = validateLabels(config.labels, report);

  const loops = config.loops;
  if (loops === undefined || loops === null) return result;
  if (!isRecord(loops)) {
    report(
      null,
      "config_invalid",
      ["loops"],
      `loops: must be a map from Loop names to Loops (e.g. loops: { start-dev: { on: issues, agent: ..., prompt: ... } }).`,
    );
    return result;
  }
  const agents = Object.keys(options.roster.agents);
  const seen = new Map<string, string>();
  for (const [name, raw] of Object.entries(loops)) {
    const before = errors.length;
    const twin = seen.get(name.toLowerCase());
    if (twin !== undefined) {
      report(name, "config_invalid", ["loops", name], `The Loop names "${twin}" and "${name}" differ only by case: rename one of them.`);
    }
    seen.set(name.toLowerCase(), name);
    const loop = validateLoop(name, raw, { agents, roster: options.roster, tenant: options.tenant ?? null }, report, lineOf);
    if (loop && errors.length === before) result.loops.push(loop);
  }
  return result;
}

type Report = (loop: string | null, token: LoopConfigErrorToken, path: Path, message: string) => void;

function validateLabels(raw: unknown, report: Report): LabelSpec[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    report(null, "config_invalid", ["labels"], "labels: must be a list, e.g. labels: [{ name: ready-for-agent, color: 0e8a16 }].");
    return [];
  }
  const labels: LabelSpec[] = [];
  const seen = new Set<string>();
  raw.forEach((entry, i) => {
    const path: Path = ["labels", i];
    if (!isRecord(entry)) {
      report(null, "config_invalid", path, `Label ${i + 1} must be a map like { name: ready-for-agent, color: 0e8a16 }.`);
      return;
    }
    let ok = true;
    const label = typeof entry.name === "string" ? `"${entry.name}"` : `${i + 1}`;
    for (const key of Object.keys(entry)) {
      if (!LABEL_KEYS.includes(key)) {
        ok = false;
        report(null, "config_unknown_key", [...path, key], `Label ${label} has an unknown key "${key}"${suggest(key, LABEL_KEYS)}: the keys are name, color and description.`);
      }
    }
    const name = entry.name;
    if (typeof name !== "string" || name.trim() === "" || name.length > LABEL_NAME_MAX) {
      ok = false;
      report(null, "config_invalid", [...path, "name"], `Label ${label} needs a name: of 1 to ${LABEL_NAME_MAX} characters.`);
    } else if (seen.has(name.toLowerCase())) {
      ok = false;
      report(null, "config_invalid", [...path, "name"], `The label "${name}" is listed twice (GitHub label names ignore case): keep one.`);
    }
    const color = typeof entry.color === "number" ? colorFromNumber(entry.color) : entry.color;
    if (typeof color !== "string" || !LABEL_COLOR.test(color)) {
      ok = false;
      const hint = typeof color === "string" && color.startsWith("#") ? ` (write it without "#": ${color.slice(1)})` : "";
      report(null, "config_invalid", [...path, "color"], `Label ${label} needs a color: of six hex digits, e.g. 0e8a16${hint}.`);
    }
    const description = entry.description;
    if (description !== undefined && description !== null) {
      if (typeof description !== "string" || description.length > LABEL_DESCRIPTION_MAX) {
        ok = false;
        report(null, "config_invalid", [...path, "description"], `Label ${label}'s description: must be text of at most ${LABEL_DESCRIPTION_MAX} characters.`);
      }
    }
    if (typeof name === "string") seen.add(name.toLowerCase());
    if (ok) {
      labels.push({
        name: name as string,
        color: (color as string).toLowerCase(),
        description: typeof description === "string" ? description : null,
      });
    }
  });
  return labels;
}

const FIELD_HELP: Record<string, string> = {
  if: "if: must be an expression, e.g. contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'",
  agent: "agent: must name one of the roster's agents",
  model: "model: must name one of the models the roster lists for the agent",
  approval: "approval: must be required or none",
  max_cycles: "max_cycles: must be a whole number of at least 1",
  prompt: "prompt: must be the text given to the agent (not empty)",
  feedback: "feedback: must be { comment: true } or { comment: false }",
  repositories: "repositories: must be a list of owner/name",
  trigger_permission: "trigger_permission: must be read, triage, write, maintain or admin",
  allow_bot_items: "allow_bot_items: must be true or false",
  max_chain_depth: "max_chain_depth: must be a whole number of at least 0",
  continue: "continue: must be new-branch or same-branch",
};

interface LoopChecks {
  agents: string[];
  roster: Pick<InstanceConfig, "agents">;
  tenant: ConfigTenant | null;
}

function validateLoop(
  name: string,
  raw: unknown,
  checks: LoopChecks,
  report: Report,
  lineOf: (path: Path) => number | null,
): LoopDefinition | null {
  const { agents, tenant } = checks;
  const at: Path = ["loops", name];
  const fail = (token: LoopConfigErrorToken, path: Path, message: string) => report(name, token, [...at, ...path], message);
  const L = `Loop "${name}"`;
  let ok = true;
  const problem = (token: LoopConfigErrorToken, path: Path, message: string) => {
    ok = false;
    fail(token, path, message);
  };

  if (!LOOP_NAME.test(name)) {
    problem("config_invalid", [], `The Loop name "${name}" is not allowed: use letters, digits, - and _, starting with a letter or digit, at most 63 characters.`);
  }
  if (!isRecord(raw)) {
    problem("config_invalid", [], `${L} must be a map with on:, agent: and prompt:.`);
    return null;
  }

  // Shape: unknown keys and types of the simple fields.
  const parsed = loopSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0] ?? "");
      if (issue.code === "unrecognized_keys") {
        for (const k of issue.keys) {
          if (issue.path.length === 0) problem("config_unknown_key", [k], unknownLoopKey(name, k));
          else problem("config_unknown_key", [...(issue.path as Path), k], `${L} has an unknown key "${k}" under ${key}:${suggest(k, ["comment"])}; ${FIELD_HELP[key] ?? "remove it"}.`);
        }
      } else if (key === "on") {
        continue; // checked by validateTrigger
      } else if (raw[key] === undefined) {
        problem("config_invalid", [key], key === "agent" ? `${L} has no agent: name one of the roster's agents (${agents.join(", ") || "the roster is empty"}).` : `${L} has no ${key}: ${FIELD_HELP[key] ?? "add it"}.`);
      } else {
        problem("config_invalid", issue.path as Path, `${L}: ${FIELD_HELP[key] ?? issue.message}.`);
      }
    }
  }

  const trigger = validateTrigger(name, raw, problem);

  if (typeof raw.agent === "string" && raw.agent !== "" && !agents.includes(raw.agent)) {
    problem(
      "config_unknown_agent",
      ["agent"],
      `${L} uses the agent "${raw.agent}", which is not in this instance's roster: use one of ${agents.join(", ") || "(none: the roster is empty)"}, or ask the instance's admin to add it to atelier.config.yml.`,
    );
  }

  const condition = typeof raw.if === "boolean" ? String(raw.if) : raw.if;
  if (typeof condition === "string") {
    try {
      compileCondition(condition);
    } catch (err) {
      if (!(err instanceof ExpressionSyntaxError)) throw err;
      problem("config_bad_expression", ["if"], `${L}, if: ${err.message}`);
    }
  }

  if (typeof raw.prompt === "string") {
    try {
      compileTemplate(raw.prompt);
    } catch (err) {
      if (!(err instanceof ExpressionSyntaxError)) throw err;
      problem("config_bad_expression", ["prompt"], `${L}, prompt: ${err.message}`);
    }
  }

  if (trigger && trigger.kind !== "comments" && readsComment(condition, raw.prompt)) {
    problem("config_invalid", ["on"], `${L} reads comment, which only a comments Loop has: write on: comments, or remove comment.… from its if: and prompt:.`);
  }

  if (raw.continue === "same-branch" && trigger && trigger.kind !== "pull_requests" && trigger.kind !== "comments") {
    problem("config_invalid", ["continue"], `${L}: continue: same-branch continues the App's own pull requests, so only a pull_requests or comments Loop has it; remove it, or write on: pull_requests.`);
  }

  let repositories: string[] | null = null;
  if (raw.repositories !== undefined && Array.isArray(raw.repositories)) {
    if (trigger && trigger.kind !== "schedule") {
      problem("config_invalid", ["repositories"], `${L}: repositories: applies only to schedule Loops (an issues or pull_requests Loop acts on its own repository); remove it.`);
    }
    const list: string[] = [];
    raw.repositories.forEach((repo, i) => {
      if (typeof repo !== "string") return; // reported with the shape
      if (!REPOSITORY_FULL_NAME.test(repo)) {
        problem("config_invalid", ["repositories", i], `${L}: "${String(repo)}" in repositories: is not owner/name; write e.g. acme/api.`);
      } else if (!list.includes(repo.toLowerCase())) {
        list.push(repo.toLowerCase());
      }
    });
    repositories = list;
    if (tenant) {
      const own = new Set(tenant.installationRepos.map((r) => r.toLowerCase()));
      raw.repositories.forEach((repo, i) => {
        if (typeof repo !== "string" || !REPOSITORY_FULL_NAME.test(repo) || own.has(repo.toLowerCase())) return;
        problem(
          "config_foreign_repository",
          ["repositories", i],
          `${L}: ${repo.toLowerCase()} in repositories: is not a repository of this installation (${tenant.repo.split("/")[0]}'s): a Loop acts only on repositories of the installation that declares it; remove it, or declare the Loop in that repository's own config.`,
        );
      });
    }
  }

  if (typeof raw.model === "string" && raw.model !== "" && typeof raw.agent === "string" && agents.includes(raw.agent)) {
    const spec = checks.roster.agents[raw.agent]!;
    const offered = [...new Set([spec.model, ...(spec.models ?? [])].filter((m): m is string => !!m))];
    if (!offered.includes(raw.model)) {
      problem(
        "config_unknown_model",
        ["model"],
        offered.length
          ? `${L} picks the model "${raw.model}", which the agent "${raw.agent}" does not list: use one of ${offered.join(", ")}, or ask the instance's admin to add it to the agent's models: in atelier.config.yml.`
          : `${L} picks the model "${raw.model}", but the agent "${raw.agent}" lists no models: remove model: (the agent's default is used), or ask the instance's admin to add it to the agent's models: in atelier.config.yml.`,
      );
    }
  }

  if (tenant && typeof raw.agent === "string" && agents.includes(raw.agent)) {
    const spec = checks.roster.agents[raw.agent]!;
    for (const target of [tenant.repo, ...(repositories ?? [])]) {
      if (agentAllows(spec, target)) continue;
      problem("config_agent_not_allowed", ["agent"], `${L}: ${agentNotAllowedMessage(raw.agent, target)}`);
      break;
    }
  }

  if (!ok || !parsed.success || !trigger) return null;
  const data = parsed.data;
  return {
    name,
    trigger: trigger.kind === "schedule" ? { ...trigger, repositories } : trigger,
    if: typeof condition === "string" ? condition : null,
    agent: data.agent,
    ...(data.model !== undefined ? { model: data.model } : {}),
    approval: data.approval ?? "none",
    approvalGiven: data.approval !== undefined,
    triggerPermission: data.trigger_permission ?? DEFAULT_TRIGGER_PERMISSION,
    allowBotItems: data.allow_bot_items ?? false,
    maxChainDepth: data.max_chain_depth ?? DEFAULT_MAX_CHAIN_DEPTH,
    ...(data.continue === "same-branch" ? { continue: data.continue } : {}),
    maxCycles: data.max_cycles ?? DEFAULT_MAX_CYCLES,
    prompt: data.prompt,
    feedback: { comment: data.feedback?.comment ?? true },
    line: lineOf(at),
  };
}

const ON_HELP = 'write on: issues, on: pull_requests, on: comments, or on: { schedule: { cron: "0 6 * * 1-5", tz: Europe/Paris } }';

function validateTrigger(
  name: string,
  raw: Record<string, unknown>,
  problem: (token: LoopConfigErrorToken, path: Path, message: string) => void,
): LoopTrigger | null {
  const L = `Loop "${name}"`;
  const on = raw.on;
  if (on === undefined || on === null) {
    problem("config_invalid", ["on"], `${L} has no on: ${ON_HELP}.`);
    return null;
  }
  if (typeof on === "string") {
    if (on === "issues" || on === "pull_requests") return { kind: on };
    if (on === "comments") return { kind: "comments", mention: true };
    problem("config_invalid", ["on"], `${L}: on: ${on} is not a trigger${suggest(on, ["issues", "pull_requests", "comments", "schedule"])}; ${ON_HELP}.`);
    return null;
  }
  if (!isRecord(on)) {
    problem("config_invalid", ["on"], `${L}: on: must be a trigger; ${ON_HELP}.`);
    return null;
  }
  if ("comments" in on && Object.keys(on).length === 1) return validateCommentsTrigger(L, on.comments, problem);
  let ok = true;
  for (const key of Object.keys(on)) {
    if (key !== "schedule") {
      ok = false;
      problem("config_unknown_key", ["on", key], `${L} has an unknown key "${key}" under on:${suggest(key, ["schedule", "comments"])}; ${ON_HELP}.`);
    }
  }
  const schedule = on.schedule;
  if (!isRecord(schedule)) {
    problem("config_invalid", ["on", "schedule"], `${L}: on: needs schedule: { cron: "...", tz: ... }; ${ON_HELP}.`);
    return null;
  }
  for (const key of Object.keys(schedule)) {
    if (!(SCHEDULE_KEYS as readonly string[]).includes(key)) {
      ok = false;
      problem("config_unknown_key", ["on", "schedule", key], `${L} has an unknown key "${key}" under schedule:${suggest(key, [...SCHEDULE_KEYS])}: the keys are cron and tz.`);
    }
  }
  const cron = schedule.cron;
  if (typeof cron !== "string") {
    problem("config_bad_cron", ["on", "schedule", "cron"], `${L} needs schedule.cron: five fields, minute hour day-of-month month day-of-week, quoted, e.g. cron: "0 6 * * 1-5".`);
    ok = false;
  } else {
    const why = validateCron(cron);
    if (why) {
      problem("config_bad_cron", ["on", "schedule", "cron"], `${L}: ${why}`);
      ok = false;
    }
  }
  const tz = schedule.tz ?? DEFAULT_TIME_ZONE;
  if (typeof tz !== "string") {
    problem("config_bad_timezone", ["on", "schedule", "tz"], `${L}: schedule.tz must be an IANA time zone name such as Europe/Paris.`);
    ok = false;
  } else {
    const why = validateTimeZone(tz);
    if (why) {
      problem("config_bad_timezone", ["on", "schedule", "tz"], `${L}: ${why}`);
      ok = false;
    }
  }
  if (!ok || typeof cron !== "string" || typeof tz !== "string") return null;
  return { kind: "schedule", cron: cron.trim().split(/\s+/).join(" "), tz, repositories: null };
}

/** `on: { comments: { mention: false } }`: every comment is ready, not only those that mention the App. */
function validateCommentsTrigger(
  L: string,
  comments: unknown,
  problem: (token: LoopConfigErrorToken, path: Path, message: string) => void,
): LoopTrigger | null {
  const HELP = "write on: comments (a comment that mentions the App), or on: { comments: { mention: false } } (every comment)";
  if (comments === null || comments === undefined) return { kind: "comments", mention: true };
  if (!isRecord(comments)) {
    problem("config_invalid", ["on", "comments"], `${L}: on.comments must be a map; ${HELP}.`);
    return null;
  }
  let ok = true;
  for (const key of Object.keys(comments)) {
    if (!(COMMENTS_KEYS as readonly string[]).includes(key)) {
      ok = false;
      problem("config_unknown_key", ["on", "comments", key], `${L} has an unknown key "${key}" under comments:${suggest(key, [...COMMENTS_KEYS])}: the only key is mention.`);
    }
  }
  const mention = comments.mention ?? true;
  if (typeof mention !== "boolean") {
    problem("config_invalid", ["on", "comments", "mention"], `${L}: comments.mention must be true or false; ${HELP}.`);
    return null;
  }
  return ok ? { kind: "comments", mention } : null;
}

/** Whether the `if:` or a `${{ }}` of the prompt reads the `comment` context (the prompt's plain text does not count). */
function readsComment(condition: unknown, prompt: unknown): boolean {
  const sources = typeof condition === "string" ? [condition] : [];
  try {
    if (typeof prompt === "string") for (const s of compileTemplate(prompt).segments) if ("source" in s) sources.push(s.source);
  } catch {
    // a prompt that does not compile is reported already
  }
  return sources.some((s) => /(?<![.\w])comment\b/.test(s));
}

function unknownTopLevelKey(key: string): string {
  if (/^poll/i.test(key)) {
    return `"${key}" is not a repository setting: the poll interval is set by the instance (poll_interval_seconds in atelier.config.yml); remove it from ${CONFIG_PATH}.`;
  }
  if (/^agents?$/i.test(key)) {
    return `Agents are defined by the instance's roster (atelier.config.yml), never by a repository: remove "${key}" and pick an agent by name in each Loop with agent:.`;
  }
  return `Unknown key "${key}" at the top of ${CONFIG_PATH}${suggest(key, ["labels", "loops"])}: the keys are labels and loops.`;
}

function unknownLoopKey(name: string, key: string): string {
  if (/^(command|cmd|run|script|args|models|env|secrets)$/i.test(key)) {
    return `Loop "${name}" has the key "${key}", which a repository cannot set: the command, the models offered and the secrets belong to the instance's roster; remove it and pick an agent with agent: (and one of its models with model:).`;
  }
  if (/^(trigger|schedule|cron|when)$/i.test(key)) {
    return `Loop "${name}" has an unknown key "${key}"${suggest(key, LOOP_KEYS)}: ${ON_HELP}.`;
  }
  return `Loop "${name}" has an unknown key "${key}"${suggest(key, LOOP_KEYS)}: the keys are ${LOOP_KEYS.join(", ")}.`;
}

/** " (did you mean x?)" for a near miss among `known`, else "". */
function suggest(word: string, known: readonly string[]): string {
  const norm = (s: string) => s.toLowerCase().replace(/-/g, "_");
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = norm(word) === norm(candidate) ? 0 : distance(norm(word), norm(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(best.length / 4)) ? ` (did you mean ${best}?)` : "";
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length]!;
}

/** YAML reads a color of digits only as a number; 1122 was written 001122. */
function colorFromNumber(n: number): string | number {
  return Number.isInteger(n) && n >= 0 && n <= 999_999 ? String(n).padStart(6, "0") : n;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
