// GET /healthz — the web process is alive (no dependency is asked: a liveness probe).
import { liveness } from "../../lib/health/readiness";
import { webVersion } from "../_server/health";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(): Response {
  return Response.json(liveness(webVersion), { headers: { "cache-control": "no-store" } });
}
