import type { Redis } from "ioredis";
import { createRedis } from "../../lib/config/redis";
import { atelierVersion } from "../../lib/config/version";
import { readiness, type Readiness } from "../../lib/health/readiness";
import { readGaugesFrom } from "../../lib/health/gauges";
import { db } from "./db";

/**
 * The web process's health: its own Redis connection for the readiness check (fails fast, so a
 * probe is answered while Redis is away), the database the scrape-time gauges read.
 */

let redis: Redis | null = null;

function probeRedis(): Redis {
  if (!redis) {
    redis = createRedis(undefined, { failFast: true });
    redis.on("error", () => {
      /* ioredis reconnects; the readiness check says Redis is away meanwhile */
    });
  }
  return redis;
}

export const webReadiness = (): Promise<Readiness> => readiness({ db: db(), redis: probeRedis(), requireWorker: true });

export const webVersion = atelierVersion();

/** Points the metrics' gauges at the web's database (once, at the first scrape). */
export function watchGauges(): void {
  readGaugesFrom(db());
}
