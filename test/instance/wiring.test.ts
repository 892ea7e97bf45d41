import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { silentLog } from "../../lib/github/log";
import { createWiring, type Wiring } from "../../lib/instance/wiring";
import { setQuota } from "../../lib/metering/quota-settings";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, startFixture, type Fixture } from "../github/support/fixture";

// What a process gets from the one wiring carries the admission gate: a poll through its
// trigger deps is refused by the quota, and its operator and `if:` re-check ask the same gate.
let fx: Fixture;
let wiring: Wiring<BullWorkQueue>;

beforeAll(async () => {
  fx = await startFixture();
  const roster = defaultInstanceConfig();
  wiring = createWiring({
    db: fx.db,
    log: silentLog,
    roster: async () => roster,
    failFast: true,
    publicUrl: "http://localhost:3000",
    keyPrefix: `t-wiring-${randomBytes(3).toString("hex")}:`,
    appSettings: async () => fx.settings,
    workQueue: ({ db, roster }) => new BullWorkQueue({ connection: bullConnection(), prefix: fx.prefix, db, pollIntervalSeconds: roster.pollIntervalSeconds }),
  });
});
afterAll(async () => {
  await wiring?.close();
  await fx?.close();
});

it("a poll through the wiring's trigger deps is held by the quota", async () => {
  const { fullName: repo } = await installRepository(fx, { owner: "wired", name: "quota" });
  const triggers = await wiring.triggerDeps();
  await pollRepository(triggers, repo);
  await setQuota(fx.db, { kind: "repository", repo }, { monthly_runs: 1 });
  fx.sim.createIssue({ login: "octo", repo, title: "First", labels: ["ready-for-agent"] });
  fx.sim.createIssue({ login: "octo", repo, title: "Second", labels: ["ready-for-agent"] });
  await pollRepository(triggers, repo);
  const { rows } = await fx.db.pool.query<{ status: string; reason: string | null }>(`SELECT status::text AS status, reason FROM events WHERE repo = $1`, [repo]);
  // one of the two opens its Run (whichever was claimed first), the other is over the quota
  expect(rows.map((r) => (r.status === "Blocked" ? r.reason : "opened")).sort()).toEqual(["opened", "repo_quota_exceeded"]);
});

it("the trigger deps, the operator and every ask of them share the one gate", async () => {
  const triggers = await wiring.triggerDeps();
  expect(triggers.admission).toBe(wiring.admission);
  expect((await wiring.operator()).admission).toBe(wiring.admission);
  expect(await wiring.triggerDeps()).toBe(triggers);
  expect(await wiring.github()).toBe(triggers.github);
  expect(await wiring.workQueue()).toBe(triggers.workQueue);
});

it("links under the instance's public URL in every process: ATELIER_PUBLIC_URL, else localhost on PORT (the web linked under AUTH_URL)", async () => {
  const saved = { public: process.env.ATELIER_PUBLIC_URL, port: process.env.PORT, auth: process.env.AUTH_URL };
  const linkedUnder = async () => {
    const w = createWiring({ db: fx.db, log: silentLog, roster: async () => defaultInstanceConfig(), failFast: true, workQueue: () => { throw new Error("not used"); } });
    const url = w.mirror.publicUrl;
    await w.close();
    return url;
  };
  try {
    process.env.ATELIER_PUBLIC_URL = "https://atelier.example.com/";
    process.env.AUTH_URL = "https://elsewhere.example.com";
    expect(await linkedUnder()).toBe("https://atelier.example.com");
    delete process.env.ATELIER_PUBLIC_URL;
    process.env.PORT = "4123";
    expect(await linkedUnder()).toBe("http://localhost:4123");
  } finally {
    for (const [name, value] of [["ATELIER_PUBLIC_URL", saved.public], ["PORT", saved.port], ["AUTH_URL", saved.auth]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});
