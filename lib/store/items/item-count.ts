import type { Db } from "../kernel/db";

/** How many Items the database holds (all repositories). */
export async function countItems(db: Db): Promise<number> {
  return db.prisma.item.count();
}
