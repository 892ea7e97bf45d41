/** Sends JSON to the dashboard's API; resolves to the answer's body or throws its sentence. */
export async function sendJson(url: string, body: unknown = {}, method: "POST" | "PUT" | "PATCH" | "DELETE" = "POST"): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: method === "DELETE" ? { accept: "application/json" } : { "content-type": "application/json", accept: "application/json" },
    ...(method === "DELETE" ? {} : { body: JSON.stringify(body) }),
    credentials: "same-origin",
  });
  const data = (await res.json().catch(() => null)) as { error?: string; message?: string } | null;
  if (!res.ok) {
    const err = new Error(data?.message ?? `The request failed (${res.status}).`) as Error & { token?: string; status?: number };
    err.token = data?.error;
    err.status = res.status;
    throw err;
  }
  return data;
}
