// Prisma CLI config: the WebAssembly schema engine over the pg adapter, so migrations run
// without downloading Prisma's native engines (see ../shared/STACK.md, "Prisma offline").
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { databaseUrl } from "./lib/store/kernel/database-url";

// The adapter cannot deserialize Postgres `name`/`char` columns (prisma/orm #27403), which the
// schema engine reads from the catalog: report them as text.
const AS_TEXT: Record<number, number> = { 18: 25, 19: 25, 1002: 1009, 1003: 1009 };
type RowDescription = { fields: { dataTypeID: number }[] };
const client = pg.Client.prototype as unknown as { _handleRowDescription: (msg: RowDescription) => void };
const handleRowDescription = client._handleRowDescription;
client._handleRowDescription = function (this: unknown, msg: RowDescription) {
  for (const f of msg.fields) f.dataTypeID = AS_TEXT[f.dataTypeID] ?? f.dataTypeID;
  return handleRowDescription.call(this, msg);
};

export default defineConfig({
  schema: "prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  async adapter() {
    const url = new URL(databaseUrl());
    return new PrismaPg({
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username || "postgres"),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1),
      allowExitOnIdle: true,
    });
  },
});
