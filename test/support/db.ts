import { randomBytes } from "node:crypto";
import { createDb, type Db } from "../../lib/store/kernel/db";

/** A Db on the test database (prepared by global-setup). Close it in afterAll. */
export function testDb(max = 10): Db {
  return createDb(process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test", max);
}

/** A repository name no other test uses, so test files can share one database. */
export function uniqueRepo(prefix = "t"): string {
  return `${prefix}-${randomBytes(4).toString("hex")}/repo`;
}
