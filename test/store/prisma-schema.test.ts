import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prismaSchemaOf } from "../../lib/store/kernel/db";
import { isolatedDb } from "../github/support/isolated-db";

type IsolatedDb = Awaited<ReturnType<typeof isolatedDb>>;
let db: IsolatedDb;
beforeAll(async () => {
  db = await isolatedDb(2);
});
afterAll(() => db.close());

describe("Prisma names its tables in the connection's schema", () => {
  it("reads the schema from the URL: its schema parameter, else its search_path option, else public", () => {
    expect(prismaSchemaOf("postgresql://h/db?schema=tenant_a")).toBe("tenant_a");
    expect(prismaSchemaOf(`postgresql://h/db?options=${encodeURIComponent("-c search_path=gh_1,public")}`)).toBe("gh_1");
    expect(prismaSchemaOf("postgresql://h/db")).toBe("public");
  });

  it("sees what the store's SQL wrote in an isolated schema", async () => {
    await db.pool.query(`INSERT INTO users (id, login) VALUES ('42', 'in-schema')`);
    expect(await db.prisma.user.findUnique({ where: { id: "42" }, select: { login: true } })).toEqual({ login: "in-schema" });
  });
});
