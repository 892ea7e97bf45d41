import type { InstanceConfig } from "../config/roster";
import { CONFIG_PATH, TOP_LEVEL_KEYS, type LoopConfigError, type RepositoryConfig } from "./config-schema";
import { validateEnvironment } from "./validate/environment";
import { validateLabels } from "./validate/label-specs";
import { validateLoop } from "./validate/loop";
import { isRecord, suggest, type ConfigTenant, type Path, type Report } from "./validate/shared";
import { parseYamlWithLines } from "../config/yaml-lines";

export type { ConfigTenant } from "./validate/shared";

/*
 * `.github/atelier.yml`, parsed and validated: this file composes the validators of
 * lib/loops/validate/ (labels, each Loop, its trigger and schedule) over the top-level keys.
 */

export interface ValidateRepositoryConfigOptions {
  /** The instance's roster: a Loop may only name one of its agents, an environment one of its toolchains. */
  roster: Pick<InstanceConfig, "agents" | "toolchains">;
  /** The 1-based line of the value at a path of the config, when the source is known. */
  lineOf?: (path: Path) => number | null;
  /**
   * The repository whose config this is, and the repositories of its installation: a Loop may
   * only act there (`repositories:`), with an agent the roster allows there (`allow:`). Unknown
   * (a config checked on its own) skips both checks.
   */
  tenant?: ConfigTenant;
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
      dashboardIssue: false,
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
  const report: Report = (loop, token, path, message) => {
    errors.push({ loop, token, line: lineOf(path), message, path: path.map(String).join(".") });
  };
  const result: RepositoryConfig = { labels: [], loops: [], dashboardIssue: false, errors };
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
  if (config.dashboard_issue !== undefined && config.dashboard_issue !== null) {
    if (typeof config.dashboard_issue === "boolean") result.dashboardIssue = config.dashboard_issue;
    else report(null, "config_invalid", ["dashboard_issue"], `dashboard_issue: is true or false (true: the App keeps one issue listing what waits on people in this repository).`);
  }
  // every Loop takes the file's environment: a wrong one stops them all
  let environment: Awaited<ReturnType<typeof validateEnvironment>> = null;
  if (config.environment !== undefined && config.environment !== null) {
    environment = validateEnvironment(config.environment, "environment:", (token, path, message) => report(null, token, ["environment", ...path], message), Object.keys(options.roster.toolchains ?? {}));
    if (!environment) return result;
  }

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
    const loop = validateLoop(name, raw, { agents, roster: options.roster, tenant: options.tenant ?? null, environment }, report, lineOf);
    if (loop && errors.length === before) result.loops.push(loop);
  }
  return result;
}

function unknownTopLevelKey(key: string): string {
  if (/^poll/i.test(key)) {
    return `"${key}" is not a repository setting: the poll interval is set by the instance (poll_interval_seconds in atelier.config.yml); remove it from ${CONFIG_PATH}.`;
  }
  if (/^agents?$/i.test(key)) {
    return `Agents are defined by the instance's roster (atelier.config.yml), never by a repository: remove "${key}" and pick an agent by name in each Loop with agent:.`;
  }
  return `Unknown key "${key}" at the top of ${CONFIG_PATH}${suggest(key, ["labels", "loops", "environment", "dashboard_issue"])}: the keys are labels, loops, environment and dashboard_issue.`;
}

