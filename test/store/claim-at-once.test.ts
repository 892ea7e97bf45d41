import { afterAll, describe, expect, it } from "vitest";
import { AT_ONCE, opensAtOnce, type AtOnceCondition } from "../../lib/engine/claim";
import { RUN_STATES, UNSTARTED } from "../../lib/engine/run-state";
import { AT_ONCE_SQL, atOnceSql, type AtOnceParams } from "../../lib/store/claim-sql";
import { claimFacts, type ClaimSnapshot } from "../../lib/store/record-and-claim";
import { join, raw, rows, sql } from "../../lib/store/sql";
import { testDb } from "../support/db";
import { itemEvent } from "../support/events";

/**
 * The optimistic claim statement decides in SQL what lib/engine/claim.ts decides in
 * TypeScript: each AT_ONCE condition has a twin in lib/store/claim-sql.ts. Here each twin is
 * evaluated by PostgreSQL over every combination of the snapshot's values where a condition
 * could turn (every Run state blocking, a reservation of the Item's generation, of the one
 * before or none, a hook or none, the gate given or not), for every Event the statement could
 * be asked about, and must answer what its TypeScript condition answers of the same facts.
 */

const db = testDb(2);
afterAll(() => db.close());

const SNAPSHOTS: ClaimSnapshot[] = [];
for (const event of [null, { status: "Queued", ignored: false }, { status: "Ignored", ignored: true }])
  for (const event_run of [null, { id: "own", state: "Pending" as const }])
    for (const blocking of [
      null,
      ...RUN_STATES.flatMap((state) =>
        [null, 0, 1].flatMap((reserved_generation) => [false, true].map((hooked) => ({ id: "b", state, reserved_generation, hooked }))),
      ),
    ])
      for (const generation of [0, 1])
        for (const ask of [false, true])
          for (const reserved of [2, 3])
            for (const metering of [null, { installationId: 1, gated: false }, { installationId: 1, gated: true }])
              SNAPSHOTS.push({ event, event_run, blocking, generation, ask, reserved, metering: metering as ClaimSnapshot["metering"] });

const EVENTS = (["item", "tick"] as const).flatMap((kind) =>
  [0, 1].flatMap((generation) =>
    [null, 3].flatMap((maxCycles) => [false, true].map((metered) => ({ event: { ...itemEvent("o/r", 1, "h", { generation, maxCycles }), kind }, metered }))),
  ),
);

const CONDITIONS = Object.keys(AT_ONCE) as AtOnceCondition[];

describe("each condition of the optimistic claim and its SQL twin", () => {
  it("answer alike over every combination of the facts", async () => {
    let compared = 0;
    for (const { event, metered } of EVENTS) {
      const p: AtOnceParams = {
        kind: sql`${event.kind}`,
        generation: sql`${event.generation}`,
        maxCycles: sql`${event.submission.maxCycles}`,
        unstarted: UNSTARTED,
        metered,
      };
      const seen = raw("seen");
      const twins = CONDITIONS.map((name, i) => sql`(${AT_ONCE_SQL[name](seen, p)}) AS ${raw(`c${i}`)}`);
      const answers = await rows<ClaimSnapshot>(
        db.pool,
        sql`SELECT seen.*, answer.*
              FROM json_to_recordset(${JSON.stringify(SNAPSHOTS)}::json)
                   AS seen(event json, event_run json, blocking json, generation int, ask boolean, reserved int, metering json)
              CROSS JOIN LATERAL (SELECT ${join([...twins, sql`(${atOnceSql("seen", p)}) AS all_hold`], ", ")}) AS answer`,
      );
      expect(answers).toHaveLength(SNAPSHOTS.length);
      for (const answer of answers) {
        const facts = claimFacts(event, answer, metered);
        const row = answer as unknown as Record<string, boolean>;
        CONDITIONS.forEach((name, i) => {
          if (row[`c${i}`] !== AT_ONCE[name](facts)) expect.fail(`${name} of ${JSON.stringify({ event: event.kind, facts })}: SQL ${row[`c${i}`]}, TypeScript ${AT_ONCE[name](facts)}`);
        });
        if (row.all_hold !== opensAtOnce(facts)) expect.fail(`opensAtOnce of ${JSON.stringify({ event: event.kind, facts })}: SQL ${row.all_hold}`);
        compared++;
      }
    }
    expect(compared).toBe(SNAPSHOTS.length * EVENTS.length);
  });
});
