import type { Redis } from "ioredis";
import type { InstanceConfig } from "../config/roster";
import type { GitHubApp } from "../github/app";
import { admission } from "../metering/admission";
import type { OperatorDeps } from "../runner/operator";
import type { Db } from "../store/db";
import type { Admission } from "../store/record-and-claim";
import type { WorkQueue } from "../work/work-queue";
import { loopConditionHolds } from "./condition-holds";
import { createTriggerDeps } from "./deps";

/**
 * The one operator (THREATS.md attack 15): what the dashboard, the JSON API and the check-run
 * buttons act through, built here and nowhere else. It always carries the admission gate (a
 * cancel that gives a queued Event its turn opens it only within quota) and the Loop's `if:`
 * read again on GitHub (the Event opens only if the Item still matches).
 */
export interface OperatorDepsInput {
  db: Db;
  /** a command connection, for the control channel */
  redis: Redis;
  workQueue: WorkQueue;
  roster: InstanceConfig;
  keyPrefix: string;
  /** the App, for the `if:` re-check (opened on first use) */
  github: () => Promise<GitHubApp>;
  /** the admission gate; default the instance's (lib/metering/admission.ts) */
  admission?: Admission;
}

export function operatorDeps(input: OperatorDepsInput): OperatorDeps {
  const gate = input.admission ?? admission();
  return {
    db: input.db,
    redis: input.redis,
    workQueue: input.workQueue,
    roster: input.roster,
    admission: gate,
    keyPrefix: input.keyPrefix,
    // a check that cannot run counts as true (continueWithNewest): the next poll revokes, nothing is lost
    recheckCondition: async (subject) =>
      loopConditionHolds(createTriggerDeps({ db: input.db, github: await input.github(), workQueue: input.workQueue, roster: input.roster, admission: gate }), subject),
  };
}
