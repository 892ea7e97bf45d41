import { agentNotAllowedMessage, type InstanceConfig } from "../../config/roster";
import {
  DEFAULT_MAX_CHAIN_DEPTH,
  DEFAULT_MAX_CYCLES,
  DEFAULT_TRIGGER_PERMISSION,
  LOOP_KEYS,
  LOOP_NAME,
  loopSchema,
  REPOSITORY_FULL_NAME,
  type LoopDefinition,
} from "../config-schema";
import { mergeEnvironment, type EnvironmentSpec } from "../../executor/environment/environment-spec";
import { validateEnvironment } from "./environment";
import { compileCondition, compileTemplate, ExpressionSyntaxError } from "../expressions";
import { isRecord, ON_HELP, suggest, type ConfigTenant, type Path, type Problem, type Report } from "./shared";
import { validateTrigger } from "./trigger";

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
  environment: "environment: must be a map with setup:, cache:, key:, verify:, env: and toolchain:",
  push: "push: must be after_review (a writer sees every Run's commits before a branch has them) or immediately (CI runs them at once, even when a non-writer steered the agent)",
};

export interface LoopChecks {
  agents: string[];
  roster: Pick<InstanceConfig, "agents" | "toolchains">;
  tenant: ConfigTenant | null;
  /** The file's `environment:` (the keys it wrote), under the Loop's own; null: none. */
  environment?: Partial<EnvironmentSpec> | null;
}

/** One Loop of `loops:`: its shape, trigger, agent and model, expressions, repositories and tenant checks. */
export function validateLoop(
  name: string,
  raw: unknown,
  checks: LoopChecks,
  report: Report,
  lineOf: (path: Path) => number | null,
): LoopDefinition | null {
  const { agents, tenant } = checks;
  const at: Path = ["loops", name];
  const fail: Problem = (token, path, message) => report(name, token, [...at, ...path], message);
  const L = `Loop "${name}"`;
  let ok = true;
  const problem: Problem = (token, path, message) => {
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

  let ownEnvironment: Partial<EnvironmentSpec> | null = null;
  if (raw.environment !== undefined && raw.environment !== null) {
    ownEnvironment = validateEnvironment(raw.environment, `${L}, environment:`, (token, path, message) => problem(token, ["environment", ...path], message), Object.keys(checks.roster.toolchains ?? {}));
  }
  const environment = mergeEnvironment(checks.environment ?? null, ownEnvironment);

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
    const allowed = tenant.allowedRepos[raw.agent];
    for (const target of [tenant.repo, ...(repositories ?? [])]) {
      if (!spec.allow || allowed?.has(target.toLowerCase())) continue;
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
    ...(data.push !== undefined ? { push: data.push } : {}),
    maxCycles: data.max_cycles ?? DEFAULT_MAX_CYCLES,
    prompt: data.prompt,
    feedback: { comment: data.feedback?.comment ?? true },
    line: lineOf(at),
    ...(environment ? { environment } : {}),
  };
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

function unknownLoopKey(name: string, key: string): string {
  if (/^(command|cmd|run|script|args|models|env|secrets)$/i.test(key)) {
    return `Loop "${name}" has the key "${key}", which a repository cannot set: the command, the models offered and the secrets belong to the instance's roster; remove it and pick an agent with agent: (and one of its models with model:).`;
  }
  if (/^(trigger|schedule|cron|when)$/i.test(key)) {
    return `Loop "${name}" has an unknown key "${key}"${suggest(key, LOOP_KEYS)}: ${ON_HELP}.`;
  }
  return `Loop "${name}" has an unknown key "${key}"${suggest(key, LOOP_KEYS)}: the keys are ${LOOP_KEYS.join(", ")}.`;
}

