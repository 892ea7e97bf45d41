import { z } from "zod";
import { SECRET_LIKE } from "../../config/roster";
import { ENVIRONMENT_KEYS, type EnvironmentSpec } from "../../executor/environment/environment-spec";
import { MAX_MAX_VERIFY_ROUNDS, verifyFieldsShape } from "../../executor/verify-spec";
import { isRecord, suggest, type Path, type Problem } from "./shared";

/**
 * `environment:`, at the top of `.github/atelier.yml` or in a Loop: its keys and their types,
 * the paths it names (inside the checkout, or `~/…` in the sandbox's home), and its env names.
 * Returns the keys written (a Loop's are laid over the file's), or null when anything is wrong.
 */

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Set by Atelier for setup: the sandbox's own, its proxy, and Atelier's. */
const RESERVED = /^(?:ATELIER_|GIT_)|^(?:PATH|HOME|TMPDIR|USER|LOGNAME|LANG|HTTPS?_PROXY|NO_PROXY)$/i;

export const environmentSchema = z.strictObject({
  setup: z.string().trim().min(1).optional(),
  cache: z.array(z.string().min(1)).optional(),
  key: z.array(z.string().min(1)).optional(),
  ...verifyFieldsShape,
  env: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  toolchain: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
});

const FIELD_HELP: Record<string, string> = {
  setup: "setup: is the shell text run before the agent, e.g. setup: npm ci",
  cache: "cache: is a list of paths setup fills, e.g. cache: [node_modules]",
  key: "key: is a list of files whose content keys the cache, e.g. key: [package-lock.json]",
  verify: "verify: is the command that checks the agent's work, e.g. verify: npm test",
  on_verify_failure: "on_verify_failure: is draft or retry",
  max_verify_rounds: `max_verify_rounds: is a whole number from 1 to ${MAX_MAX_VERIFY_ROUNDS}`,
  env: "env: is a map of NAME: value, e.g. env: { NODE_ENV: test }",
  toolchain: "toolchain: is the name of one of the instance's toolchains, or a list of them, e.g. toolchain: node-22",
};

/** Why a path of cache: or key: is not one; null when it is. */
export function environmentPathProblem(path: string, home: boolean): string | null {
  const rest = home && path.startsWith("~/") ? path.slice(2) : path;
  if (rest.startsWith("/") || rest.startsWith("~")) return home ? "is not inside the checkout or the home (write node_modules, or ~/.cargo/registry)" : "is not a path inside the checkout";
  const parts = rest.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.length === 0) return "names the whole checkout; name the folders setup fills";
  if (parts.includes("..")) return "leaves its folder (..)";
  if (parts[0] === ".git") return "is git's own folder";
  if (rest.includes("\0")) return "is not a path";
  return null;
}

function unknownKeyMessage(where: string, key: string): string {
  if (/^(registr(y|ies)|egress|hosts?|network|proxy|allow)$/i.test(key)) {
    return `${where} has the key "${key}", which a repository cannot set: the hosts setup may reach are the instance's registry allowlist (registries: in atelier.config.yml); remove it, or ask the instance's admin.`;
  }
  if (/^(secrets?|tokens?)$/i.test(key)) {
    return `${where} has the key "${key}", which a repository cannot set: secrets belong to the instance's roster, and environment: holds only values that are not secrets; remove it.`;
  }
  return `${where} has an unknown key "${key}"${suggest(key, ENVIRONMENT_KEYS)}: the keys are ${ENVIRONMENT_KEYS.join(", ")}.`;
}

/** Why `name` (of `toolchain:`) is not one of the instance's `offered` toolchains; null when it is. */
function toolchainProblem(name: string, offered: readonly string[]): { token: "config_invalid" | "config_unknown_toolchain"; why: string } | null {
  if (offered.includes(name)) return null;
  const list = offered.length ? `it offers ${offered.join(", ")}` : "it offers none";
  if (/[/\\~]|^\./.test(name)) {
    return { token: "config_invalid", why: `"${name}" is a path, and a repository cannot name a folder of the host: it picks one of the instance's toolchains by name (toolchains: in atelier.config.yml; ${list})` };
  }
  return { token: "config_unknown_toolchain", why: `"${name}" is not a toolchain of this instance${suggest(name, offered)}: ${list} (toolchains: in atelier.config.yml)` };
}

/**
 * Validates `raw` (the value of an `environment:` key at `at`); `where` names it in sentences;
 * `toolchains` are the names the instance's roster offers.
 */
export function validateEnvironment(raw: unknown, where: string, problem: Problem, toolchains: readonly string[]): Partial<EnvironmentSpec> | null {
  if (!isRecord(raw)) {
    problem("config_invalid", [], `${where} must be a map with ${ENVIRONMENT_KEYS.slice(0, -1).join(":, ")}: and ${ENVIRONMENT_KEYS.at(-1)}: (e.g. environment: { setup: npm ci }).`);
    return null;
  }
  let ok = true;
  const fail: Problem = (token, path, message) => {
    ok = false;
    problem(token, path, message);
  };
  const parsed = environmentSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0] ?? "");
      if (issue.code === "unrecognized_keys") for (const k of issue.keys) fail("config_unknown_key", [...(issue.path as Path), k], unknownKeyMessage(where, k));
      else fail("config_invalid", issue.path as Path, `${where} ${FIELD_HELP[key] ?? issue.message}.`);
    }
    return null;
  }
  const data = parsed.data;
  const paths = (field: "cache" | "key", home: boolean) =>
    data[field]?.forEach((p, i) => {
      const why = environmentPathProblem(p, home);
      if (why) fail("config_invalid", [field, i], `${where} the ${field}: path "${p}" ${why}.`);
    });
  paths("cache", true);
  paths("key", false);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(data.env ?? {})) {
    if (!ENV_NAME.test(name)) fail("config_invalid", ["env", name], `${where} "${name}" in env: is not a variable name (letters, digits and _).`);
    else if (RESERVED.test(name)) fail("config_invalid", ["env", name], `${where} ${name} in env: is set by Atelier for setup; remove it.`);
    else if (SECRET_LIKE.test(name.toUpperCase())) {
      fail("config_invalid", ["env", name], `${where} ${name} in env: looks like a secret, and environment: is read by anyone who can read the repository; remove it (secrets belong to the instance's roster).`);
    }
    env[name] = String(value);
  }
  const picked = data.toolchain === undefined ? undefined : typeof data.toolchain === "string" ? [data.toolchain] : data.toolchain;
  picked?.forEach((name, i) => {
    const wrong = toolchainProblem(name, toolchains);
    if (wrong) fail(wrong.token, typeof data.toolchain === "string" ? ["toolchain"] : ["toolchain", i], `${where} ${wrong.why}.`);
  });
  if (!ok) return null;
  return {
    ...(data.setup !== undefined ? { setup: data.setup } : {}),
    ...(data.cache !== undefined ? { cache: data.cache } : {}),
    ...(data.key !== undefined ? { key: data.key } : {}),
    ...(data.verify !== undefined ? { verify: data.verify } : {}),
    ...(data.on_verify_failure !== undefined ? { onVerifyFailure: data.on_verify_failure } : {}),
    ...(data.max_verify_rounds !== undefined ? { maxVerifyRounds: data.max_verify_rounds } : {}),
    ...(data.env !== undefined ? { env } : {}),
    ...(picked !== undefined ? { toolchains: [...new Set(picked)] } : {}),
  };
}
