import { INSTANCE_SECRETS, instanceSecret } from "./kept-secret";

/** ATELIER_SECRET_KEY, else one generated on a first local start and kept in .atelier/secret-key (0600). */
export function secretKey(env: NodeJS.ProcessEnv = process.env): string {
  return instanceSecret(INSTANCE_SECRETS.key, env);
}
