import type { Octokit } from "../github/app-client";
import { describeError, httpStatusOf } from "../github/rate-limit-errors";
import { splitRepo } from "../github/repo-name";
import { CONFIG_PATH, type LoopConfigError, type RepositoryConfig } from "../loops/config-schema";
import { parseRepositoryConfig, validateRepositoryConfig, type ConfigTenant } from "../loops/parse-config";
import { parseYamlWithLines, type YamlWithLines } from "../config/yaml-lines";
import type { StoredConfig } from "../loops/stored-config";
import type { Db } from "../store/kernel/db";
import { installationRepositories, type RegisteredRepository } from "../store/github/repository-rows";
import { allowedRepositoriesByAgent } from "../auth/roster-allow";
import { gitHubHost } from "../github/github-user-api";
import { storedConfig, writeRepositoryConfig } from "../store/items/repository-configs";
import type { TriggerDeps } from "./deps";

interface ConfigFile {
  owner: string;
  repo: string;
  path: string;
  url: string;
  config: Record<string, unknown> | null;
}

/**
 * Reads `.github/atelier.yml` through Probot's config loader (the repository's file, else the
 * owner's `.github` repository; `_extends` merges another file under it) and validates it
 * with the roster. Problems never throw: they come back as errors, each on its Loop (or on the
 * file), with the line of the file that holds the offending key.
 *
 * `_extends` may name only the owner's `.github` repository: a writer of one repository cannot
 * merge another repository's config (whose Loops would run here), and nothing of a file it
 * names elsewhere — a key, a line, a parse error — reaches the errors (`config_extends_forbidden`).
 */
export async function readRepositoryConfig(
  octokit: Octokit,
  fullName: string,
  roster: TriggerDeps["roster"],
  now: Date,
  tenant?: ConfigTenant,
): Promise<StoredConfig> {
  const { owner, repo } = splitRepo(fullName);
  const checks = { roster, ...(tenant ? { tenant } : {}) };
  let merged: unknown;
  let files: ConfigFile[];
  try {
    const result = await octokit.config.get({ owner, repo, path: CONFIG_PATH, defaults: mergeConfigs });
    merged = result.config;
    files = result.files as ConfigFile[];
  } catch (err) {
    if (httpStatusOf(err)) throw err;
    // the loader refuses YAML that does not parse: read the text to say where
    return unreadableConfig(octokit, owner, repo, err, checks, now);
  }
  const foreign = files.filter((f) => !configHomeOf(owner, repo, f));
  if (foreign.length) return stored({ labels: [], loops: [], dashboardIssue: false, errors: [extendsForbidden(owner)] }, now, []);
  const found = files.filter((f) => f.config !== null);
  // a file that is no mapping (a YAML list, a string) is not merged by the loader: it is the error
  const notAMap = found.find((f) => !isRecord(f.config));
  const subject = notAMap ? notAMap.config : merged;
  let parsed = validateRepositoryConfig(isEmpty(subject) && found.length === 0 ? null : subject, checks);
  if (parsed.errors.length) {
    const texts = await Promise.all(found.map(async (f) => ({ file: f, yaml: parseYamlWithLines(await rawFile(octokit, f.owner, f.repo, f.path)) })));
    parsed = validateRepositoryConfig(subject, { ...checks, lineOf: (path) => lineIn(texts, path) });
    parsed = { ...parsed, errors: parsed.errors.map((e) => withFile(e, texts, fullName)) };
  }
  return stored(parsed, now, found.map((f) => `${f.owner}/${f.repo}:${f.path}`));
}

/**
 * Probot's merge of the files (base first, the repository's own file last): Loops merge by
 * name and labels by name, the later file winning; any other key is replaced.
 */
export function mergeConfigs(configs: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const config of configs) {
    if (!isRecord(config)) continue;
    for (const [key, value] of Object.entries(config)) {
      if (key === "loops" && isRecord(value) && isRecord(out.loops)) out.loops = { ...out.loops, ...value };
      else if (key === "labels" && Array.isArray(value) && Array.isArray(out.labels)) {
        const byName = new Map<string, unknown>();
        for (const label of [...out.labels, ...value]) byName.set(labelName(label), label);
        out.labels = [...byName.values()];
      } else out[key] = value;
    }
  }
  return out;
}

/** Stores what was read: the config, its file-level error, each Loop's error (with its line). */
export async function storeRepositoryConfig(db: Db, fullName: string, config: StoredConfig): Promise<void> {
  const repo = fullName.toLowerCase();
  const fileErrors = config.errors.filter((e) => e.loop === null);
  const loopErrors = new Map<string, LoopConfigError[]>();
  for (const e of config.errors) if (e.loop !== null) loopErrors.set(e.loop, [...(loopErrors.get(e.loop) ?? []), e]);
  const rows = [...loopErrors.entries()].map(([loop, errors]) => ({
    loop,
    error: errors.map((e) => e.message).join(" "),
    line: errors.find((e) => e.line !== null)?.line ?? null,
  }));
  const fileError = fileErrors.length ? fileErrors.map((e) => (e.line ? `line ${e.line}: ${e.message}` : e.message)).join(" ") : null;
  await writeRepositoryConfig(db, repo, config, fileError, rows);
}

/** Whether a stored config is too old to use without reading it again. */
export function isConfigStale(config: StoredConfig | null, now: number, ttlMs: number): boolean {
  return config === null || now - Date.parse(config.readAt) >= ttlMs;
}

/**
 * The repository's config: the stored one while fresh, else read again and stored. A probe's
 * `probeMark` (the blob ids of the config files) other than the one the stored config was read
 * under makes it stale too.
 */
export async function ensureConfig(deps: TriggerDeps, repo: RegisteredRepository, options: { maxAgeMs?: number; probeMark?: string } = {}): Promise<StoredConfig> {
  const current = await storedConfig(deps.db, repo.fullName);
  const now = Date.now();
  const marked = options.probeMark === undefined || current?.probeMark === options.probeMark;
  if (marked && !isConfigStale(current, now, options.maxAgeMs ?? deps.configTtlMs)) return current!;
  return refreshRepositoryConfig(deps, repo, options.probeMark);
}

/**
 * The files (`owner/name:path`) a repository's config may come from, sorted: its own
 * `.github/atelier.yml`, its owner's `.github` repository's, and those its last read merged
 * (an `_extends` path). The change probe reads their blob ids.
 */
export function configFilesOf(fullName: string, config: StoredConfig | null): string[] {
  const owner = fullName.toLowerCase().split("/")[0]!;
  const files = [`${fullName.toLowerCase()}:${CONFIG_PATH}`, `${owner}/.github:${CONFIG_PATH}`, ...(config?.files ?? [])];
  return [...new Set(files.map((f) => f.replace(/^[^:]*/, (repo) => repo.toLowerCase())))].sort();
}

/** The Loops a stored config lists: its valid ones, then those it holds an error for. */
export function loopNames(config: StoredConfig | null): string[] {
  if (!config) return [];
  const names = config.loops.map((l) => l.name);
  for (const e of config.errors) if (e.loop !== null && !names.includes(e.loop)) names.push(e.loop);
  return names;
}

/**
 * A file that no longer reads as a config (YAML that does not parse, not a mapping) has no
 * Loops: those it had stay listed, each with the file's error, and none of them runs until the
 * file is fixed.
 */
export function keepLoopsOfBrokenFile(before: StoredConfig | null, read: StoredConfig): StoredConfig {
  const fileError = read.errors.find((e) => e.loop === null);
  if (!fileError || read.loops.length) return read;
  const listed = new Set(loopNames(read));
  const lost = loopNames(before).filter((name) => !listed.has(name));
  return { ...read, errors: [...read.errors, ...lost.map((loop) => ({ ...fileError, loop }))] };
}

/** Reads the config from GitHub now and stores it (with the probe's mark of its files that asked for the read, if one did). */
export async function refreshRepositoryConfig(deps: TriggerDeps, repo: RegisteredRepository, probeMark?: string): Promise<StoredConfig> {
  const before = await storedConfig(deps.db, repo.fullName);
  const installationRepos = await installationRepositories(deps.db, repo.installationId);
  const allowedRepos = await allowedRepositoriesByAgent(deps.db, gitHubHost(deps.github.settings.baseUrl), deps.roster, installationRepos);
  const tenant = { repo: repo.fullName, installationRepos, allowedRepos };
  const read = await readRepositoryConfig(deps.github.installationOctokit(repo.installationId), repo.fullName, deps.roster, new Date(), tenant);
  const config = { ...keepLoopsOfBrokenFile(before, read), ...(probeMark !== undefined ? { probeMark } : {}) };
  await storeRepositoryConfig(deps.db, repo.fullName, config);
  // one job scheduler per schedule Loop: bring them in line when those Loops changed
  if (scheduleSignature(before) !== scheduleSignature(config)) await deps.workQueue.syncSchedulers();
  if (config.errors.length) deps.log.warn({ repo: repo.fullName, errors: config.errors.length }, "repository config has errors");
  return config;
}

// ---------------------------------------------------------------------------------------------

function scheduleSignature(config: StoredConfig | null): string {
  const loops = (config?.loops ?? []).filter((l) => l.trigger.kind === "schedule").map((l) => [l.name, l.trigger]);
  return JSON.stringify(loops.sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)));
}

/** Whether a config file is the repository's own or its owner's `.github` repository's. */
function configHomeOf(owner: string, repo: string, file: Pick<ConfigFile, "owner" | "repo">): boolean {
  if (file.owner.toLowerCase() !== owner.toLowerCase()) return false;
  return file.repo.toLowerCase() === repo.toLowerCase() || file.repo.toLowerCase() === ".github";
}

/** Whether a config's `_extends` (Probot's `repo`, `owner/repo`, either with `:path`) names another repository than the owner's `.github`. */
function extendsElsewhere(owner: string, config: unknown): boolean {
  const target = isRecord(config) ? config._extends : undefined;
  if (typeof target !== "string") return false;
  const [where = ""] = target.split(":");
  const [o = "", r = ""] = where.includes("/") ? where.split("/") : [owner, where];
  return o.toLowerCase() !== owner.toLowerCase() || r.toLowerCase() !== ".github";
}

/** The error of a config whose `_extends` names another repository than the owner's `.github`: it names nothing of that repository. */
function extendsForbidden(owner: string): LoopConfigError {
  return {
    loop: null,
    token: "config_extends_forbidden",
    line: null,
    message: `${CONFIG_PATH} extends (\`_extends\`) another repository's config: only ${owner}/.github may be extended. No Loop of this file runs until it says \`_extends: .github\` or nothing.`,
    path: "_extends",
  };
}

async function unreadableConfig(
  octokit: Octokit,
  owner: string,
  repo: string,
  err: unknown,
  checks: { roster: TriggerDeps["roster"]; tenant?: ConfigTenant },
  now: Date,
): Promise<StoredConfig> {
  for (const [o, r] of [[owner, repo], [owner, ".github"]] as const) {
    const text = await rawFile(octokit, o, r, CONFIG_PATH);
    if (text === "") continue;
    // a file extended from elsewhere failed to parse: what the loader says of it is that file's text
    if (extendsElsewhere(owner, parseYamlWithLines(text).value)) return stored({ labels: [], loops: [], dashboardIssue: false, errors: [extendsForbidden(owner)] }, now, []);
    const parsed = parseRepositoryConfig(text, checks);
    if (parsed.errors.length) return stored(parsed, now, [`${o}/${r}:${CONFIG_PATH}`]);
  }
  return stored(
    {
      labels: [],
      loops: [],
      dashboardIssue: false,
      errors: [{ loop: null, token: "config_invalid", line: null, message: `${CONFIG_PATH} could not be read: ${describeError(err)}`, path: "" }],
    },
    now,
    [],
  );
}

/** The raw text of a file at the default branch; "" when it does not exist. */
async function rawFile(octokit: Octokit, owner: string, repo: string, path: string): Promise<string> {
  try {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { owner, repo, path, mediaType: { format: "raw" } });
    return typeof data === "string" ? data : "";
  } catch (err) {
    if (httpStatusOf(err)?.status === 404) return "";
    throw err;
  }
}

/** The line of `path` in the first file (the repository's own first) whose YAML holds it. */
function lineIn(texts: { file: ConfigFile; yaml: YamlWithLines }[], path: (string | number)[]): number | null {
  for (const { yaml } of texts) if (hasPath(yaml.value, path)) return yaml.lineOf(path);
  // a key only some file holds: the deepest ancestor of the repository's own file
  return texts[0]?.yaml.lineOf(path) ?? null;
}

/** An error found in another file than the repository's own says which file. */
function withFile(error: LoopConfigError, texts: { file: ConfigFile; yaml: YamlWithLines }[], fullName: string): LoopConfigError {
  const path = error.path ? error.path.split(".") : [];
  const holder = texts.find((t) => hasPath(t.yaml.value, path));
  if (!holder || `${holder.file.owner}/${holder.file.repo}`.toLowerCase() === fullName.toLowerCase()) return error;
  return { ...error, message: `${error.message} (in ${holder.file.owner}/${holder.file.repo}:${holder.file.path})` };
}

function hasPath(value: unknown, path: readonly (string | number)[]): boolean {
  let node = value;
  for (const part of path) {
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isRecord(node) && Object.hasOwn(node, String(part))) node = node[String(part)];
    else return false;
    if (node === undefined) return false;
  }
  return true;
}

function stored(config: RepositoryConfig, now: Date, files: string[]): StoredConfig {
  return { readAt: now.toISOString(), labels: config.labels, loops: config.loops, dashboardIssue: config.dashboardIssue, errors: config.errors, files };
}

function labelName(label: unknown): string {
  return isRecord(label) && typeof label.name === "string" ? label.name.toLowerCase() : JSON.stringify(label);
}

function isEmpty(value: unknown): boolean {
  return !isRecord(value) || Object.keys(value).length === 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
