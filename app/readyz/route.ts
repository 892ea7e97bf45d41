// GET /readyz — Postgres, Redis and at least one live worker; 503 with each check when not ready.
import { readinessStatus } from "../../lib/health/readiness";
import { webReadiness } from "../_server/health";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const r = await webReadiness();
  return Response.json(r, { status: readinessStatus(r), headers: { "cache-control": "no-store" } });
}
