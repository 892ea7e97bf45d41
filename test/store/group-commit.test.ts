import { expect, it } from "vitest";
import { groupCommit } from "../../lib/store/group-commit";

/** A kind whose statements the test releases one by one: each `many` waits for `release()`. */
function heldKind(opts: { failWhen?: (inputs: readonly string[]) => boolean; aloneFails?: (input: string) => boolean } = {}) {
  const statements: string[][] = [];
  const alone: string[] = [];
  const releases: (() => void)[] = [];
  const call = groupCommit<string, string>({
    key: (input) => input.split(":")[0]!,
    many: async (inputs) => {
      statements.push([...inputs]);
      await new Promise<void>((r) => releases.push(r));
      if (opts.failWhen?.(inputs)) throw new Error("the batch failed");
      return inputs.map((i) => `done ${i}`);
    },
    alone: async (input) => {
      alone.push(input);
      if (opts.aloneFails?.(input)) throw new Error(`${input} failed alone`);
      return `alone ${input}`;
    },
  });
  /** lets the statement in flight finish, once it has been sent */
  const release = async () => {
    await until(() => releases.length > 0);
    releases.shift()!();
  };
  return { call, statements, alone, release };
}

/** Waits for the microtasks and timers of the calls to settle until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setImmediate(r));
  expect(done()).toBe(true);
}

it("sends a call at once when nothing is in flight, and the calls made meanwhile together in the next statement", async () => {
  const k = heldKind();
  const first = k.call("a:1");
  await until(() => k.statements.length === 1);
  const meanwhile = [k.call("b:1"), k.call("c:1"), k.call("d:1")];
  // nothing more is sent while the first statement is in flight
  expect(k.statements).toEqual([["a:1"]]);
  await k.release();
  expect(await first).toBe("done a:1");
  await k.release();
  expect(await Promise.all(meanwhile)).toEqual(["done b:1", "done c:1", "done d:1"]);
  expect(k.statements).toEqual([["a:1"], ["b:1", "c:1", "d:1"]]);
});

it("never puts two calls of one key in one statement: the later one waits for the next", async () => {
  const k = heldKind();
  const first = k.call("a:1");
  await until(() => k.statements.length === 1);
  const rest = [k.call("b:1"), k.call("b:2"), k.call("c:1"), k.call("b:3")];
  await k.release();
  await k.release();
  await k.release();
  await k.release();
  await first;
  expect(await Promise.all(rest)).toEqual(["done b:1", "done b:2", "done c:1", "done b:3"]);
  expect(k.statements).toEqual([["a:1"], ["b:1", "c:1"], ["b:2"], ["b:3"]]);
});

it("makes each call of a failed statement alone, so that each caller gets its own answer or its own error", async () => {
  const k = heldKind({ failWhen: (inputs) => inputs.length > 1, aloneFails: (input) => input === "c:1" });
  const first = k.call("a:1");
  await until(() => k.statements.length === 1);
  const rest = [k.call("b:1"), k.call("c:1"), k.call("d:1")].map((p) => p.then((v) => v, (err: Error) => err.message));
  await k.release();
  await k.release();
  expect(await first).toBe("done a:1");
  expect(await Promise.all(rest)).toEqual(["alone b:1", "c:1 failed alone", "alone d:1"]);
  expect(k.alone).toEqual(["b:1", "c:1", "d:1"]);
  // the kind goes on: the next call is a statement again
  const next = k.call("e:1");
  await k.release();
  expect(await next).toBe("done e:1");
});
