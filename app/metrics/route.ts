// GET /metrics — the web process's Prometheus metrics (Bearer ATELIER_METRICS_TOKEN; refused without it unless ATELIER_METRICS_OPEN=true).
import { scrapeMetrics } from "../../lib/health/scrape";
import { errorResponse } from "../_server/api";
import { watchGauges } from "../_server/health";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  try {
    watchGauges();
    const m = await scrapeMetrics(request.headers.get("authorization"));
    return new Response(m.body, { headers: { "content-type": m.contentType, "cache-control": "no-store" } });
  } catch (err) {
    return errorResponse(err);
  }
}
