import { z } from "zod";
import { MAX_MAX_VERIFY_ROUNDS, VERIFY_KEYS, verifyFieldsShape, type VerifyFields } from "../../executor/verify-spec";
import { isRecord, suggest, type Path, type Problem } from "./shared";

/**
 * The verify keys of an `environment:` block (at the top of `.github/atelier.yml` or in a
 * Loop): `verify`, `on_verify_failure`, `max_verify_rounds`. The block's other keys (setup,
 * cache, key, env) are the environment's own; a key that is neither is reported here.
 */

/** Every key an `environment:` block may hold. */
export const ENVIRONMENT_KEYS = ["setup", "cache", "key", "env", ...VERIFY_KEYS] as const;

const HELP: Record<string, string> = {
  verify: "verify: must be a shell command, e.g. verify: npm test",
  on_verify_failure: "on_verify_failure: must be draft or retry",
  max_verify_rounds: `max_verify_rounds: must be a whole number from 1 to ${MAX_MAX_VERIFY_ROUNDS}`,
};

const verifyFieldsSchema = z.object(verifyFieldsShape);

/**
 * Validates the verify keys of the `environment:` at `at` (undefined: none written); each
 * problem goes to `problem`, and what is valid is returned (the caller drops the Loop on a problem).
 */
export function validateVerifyFields(raw: unknown, at: Path, problem: Problem): VerifyFields {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) {
    problem("config_invalid", at, "environment: must be a map, e.g. environment: { verify: npm test }.");
    return {};
  }
  for (const key of Object.keys(raw)) {
    if ((ENVIRONMENT_KEYS as readonly string[]).includes(key)) continue;
    problem("config_unknown_key", [...at, key], `Unknown key "${key}" under environment:${suggest(key, ENVIRONMENT_KEYS)}: the keys are ${ENVIRONMENT_KEYS.join(", ")}.`);
  }
  const mine = Object.fromEntries(VERIFY_KEYS.filter((k) => raw[k] !== undefined).map((k) => [k, raw[k]]));
  const parsed = verifyFieldsSchema.safeParse(mine);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    const key = String(issue.path[0] ?? "");
    problem("config_invalid", [...at, key], `${HELP[key] ?? issue.message}.`);
  }
  return {};
}
