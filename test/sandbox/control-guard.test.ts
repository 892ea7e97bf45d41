import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox";

// THREATS.md, attack 21: the simulator's control API accepted cross-site and foreign-Host
// requests — any web page the operator opened could drive it (a form posted to
// 127.0.0.1:3001, or a name re-pointed at 127.0.0.1: DNS rebinding). Played over real HTTP.

let sim: Simulator;
let port = 0;
beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
  port = Number(new URL(sim.url).port);
});
afterAll(async () => {
  await sim?.close();
});

function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers: { ...(body ? { "content-type": "application/json" } : {}), ...headers } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const own = () => ({ host: `127.0.0.1:${port}` });
const issue = (title: string) => JSON.stringify({ repo: "demo-org/webapp", title });
const stateHas = async (title: string) => (await send("GET", "/_sim/state", own())).text.includes(title);

describe("the simulator's control API", () => {
  it("refuses a foreign Host, for reads and writes alike, and changes nothing", async () => {
    for (const host of ["evil.example", `evil.example:${port}`, "127.0.0.1:1", `atelier.example.com:${port}`]) {
      const write = await send("POST", "/_sim/control/createIssue", { host }, issue(`rebound ${host}`));
      expect(write.status, host).toBe(403);
      expect(JSON.parse(write.text).message).toContain("addressed to it");
      expect((await send("GET", "/_sim/state", { host })).status).toBe(403);
      expect((await send("GET", "/_sim", { host })).status).toBe(403);
      expect(await stateHas(`rebound ${host}`)).toBe(false);
    }
  });

  it("refuses cross-site writes (Sec-Fetch-Site, Origin), and changes nothing", async () => {
    const attacks: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "http://evil.example" },
      { origin: `http://localhost:3000` },
      { origin: "null" },
      { origin: "not a url" },
    ];
    for (const [i, headers] of attacks.entries()) {
      const form = await send("POST", "/_sim/form/createIssue", { ...own(), ...headers, "content-type": "application/x-www-form-urlencoded" }, `repo=demo-org/webapp&title=cross-${i}`);
      expect(form.status, JSON.stringify(headers)).toBe(403);
      const api = await send("POST", "/_sim/control/createIssue", { ...own(), ...headers }, issue(`cross-${i}`));
      expect(api.status, JSON.stringify(headers)).toBe(403);
      expect(await stateHas(`cross-${i}`)).toBe(false);
    }
  });

  it("takes its own page's requests and a program's, on each loopback name", async () => {
    const fromPage = await send("POST", "/_sim/control/createIssue", { ...own(), origin: sim.url, "sec-fetch-site": "same-origin" }, issue("from its page"));
    expect(fromPage.status, fromPage.text).toBe(200);
    const fromCurl = await send("POST", "/_sim/control/createIssue", { host: `localhost:${port}` }, issue("from a program"));
    expect(fromCurl.status, fromCurl.text).toBe(200);
    expect(await stateHas("from its page")).toBe(true);
    expect(await stateHas("from a program")).toBe(true);
    // a link followed from elsewhere opens the page (a read)
    expect((await send("GET", "/_sim", { ...own(), "sec-fetch-site": "cross-site" })).status).toBe(200);
  });
});
