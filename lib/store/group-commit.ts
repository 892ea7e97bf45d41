/**
 * Group commit (ADR 0030): while a statement of one kind is in flight, the calls of that kind
 * wait, and the next statement carries all of them. A process with nothing in flight sends a
 * call at once; under load each statement carries the calls that arrived while the one before
 * it ran, so Postgres initialises, executes and commits one statement for several Runs.
 *
 * A batch that fails (a lock it would wait for too long, a deadlock, a lost connection) writes
 * nothing, being one statement: each of its calls is then made alone, so that each caller gets
 * its own answer or its own error, while the next statement of the kind goes out: a call that
 * waits alone for a locked Run holds up no other.
 */
export interface GroupCommitted<In, Out> {
  /** Two calls of one key never share a statement: the later one waits for the next. */
  key(input: In): string;
  /** Several calls in one statement; one answer per call, in their order. */
  many(inputs: readonly In[]): Promise<Out[]>;
  /** One call alone, after its batch failed. */
  alone(input: In): Promise<Out>;
}

/** At most this many calls share a statement. */
const MAX_BATCH = 64;

interface Call<In, Out> {
  input: In;
  resolve(out: Out): void;
  reject(err: unknown): void;
}

/** The calls of one kind, group-committed: one statement in flight, the next carrying every call that waits. */
export function groupCommit<In, Out>(kind: GroupCommitted<In, Out>): (input: In) => Promise<Out> {
  const waiting: Call<In, Out>[] = [];
  let inFlight = false;

  /** The waiting calls the next statement carries: the first of each key, oldest first. */
  const nextBatch = (): Call<In, Out>[] => {
    const keys = new Set<string>();
    const batch: Call<In, Out>[] = [];
    for (let i = 0; i < waiting.length && batch.length < MAX_BATCH; ) {
      const key = kind.key(waiting[i]!.input);
      if (keys.has(key)) i++;
      else {
        keys.add(key);
        batch.push(...waiting.splice(i, 1));
      }
    }
    return batch;
  };

  /** Sends `batch`; resolves once its statement is done (a failed batch's calls are then made alone, off the kind's turn). */
  const send = async (batch: Call<In, Out>[]): Promise<void> => {
    let answers: Out[];
    try {
      answers = await kind.many(batch.map((c) => c.input));
    } catch {
      for (const c of batch) kind.alone(c.input).then(c.resolve, c.reject);
      return;
    }
    batch.forEach((c, i) => c.resolve(answers[i]!));
  };

  const pump = (): void => {
    if (inFlight || !waiting.length) return;
    inFlight = true;
    void send(nextBatch()).finally(() => {
      inFlight = false;
      pump();
    });
  };

  return (input) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      pump();
    });
}

/** One value per Db (or any object), made on first use: a Db's group-committed kinds. */
export function perObject<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const made = new WeakMap<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) made.set(key, (value = make(key)));
    return value;
  };
}
