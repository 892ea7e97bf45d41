/** Time as the GitHub layer and the triggers see it; tests inject a controlled one. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
