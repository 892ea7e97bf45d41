import { claimBench } from "./claim";

/** Every benchmark, by name, in the order `npm run bench` runs them. */
export const BENCHES: Record<string, (databaseUrl: string) => Promise<void>> = {
  claim: claimBench,
};
