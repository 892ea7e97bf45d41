import { INSTANCE_SECRETS, instanceSecret } from "../secrets/kept-secret";

/** AUTH_SECRET, else one generated on a first local run and kept in .atelier/auth-secret (0600). */
export function authSecret(env: NodeJS.ProcessEnv = process.env): string {
  return instanceSecret(INSTANCE_SECRETS.auth, env);
}
