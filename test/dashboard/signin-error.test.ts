import { afterAll, beforeAll, expect, it } from "vitest";
import { startWebServer, webServerEnv, type WebServer } from "../support/web-server";

// Bad input never answers 500: the sign-in page reads `?error=` as a key of its own messages,
// and a key every object inherits (`__proto__`, `constructor`) rendered an object and crashed
// the page. The real web process (next start), asked by a stranger with no session.

let web: WebServer;

beforeAll(async () => {
  web = await startWebServer(webServerEnv("signin-error"));
}, 300_000);

afterAll(async () => {
  await web?.stop();
});

it.each(["__proto__", "constructor", "toString", "no-such-error"])("answers ?error=%s with the generic message, not a 500", async (error) => {
  const res = await fetch(`${web.url}/signin?error=${error}`, { redirect: "manual" });
  expect(res.status).toBe(200);
  expect(await res.text()).toContain("The sign-in did not work; try again.");
});
