import { lookup } from "node:dns/promises";

/** How a name is resolved before a connection, and whether private addresses may be reached. */
export interface ResolvedAddress {
  address: string;
  family: number;
}
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface TargetPolicy {
  allowPrivate: boolean;
  /** How names resolve (default: the system resolver, every address). */
  resolve?: Resolver;
}

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });
