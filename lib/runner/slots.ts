import { AtelierError } from "../errors";

/**
 * A worker's Attempt slots (max_concurrent_attempts), handed out in order of Event receipt:
 * the oldest waiting Run gets the next free slot, ties by arrival. Closing admission (drain)
 * refuses every waiter and every later request; slots already held stay held until released.
 */

/** 503: this worker is draining; the job goes back to the queue for another worker. */
export class DrainingError extends AtelierError {
  constructor() {
    super("worker_draining", "This worker is shutting down and admits no new Attempt.");
  }
}

export interface Slot {
  release(): void;
}

interface Waiter {
  receivedAt: number;
  seq: number;
  grant: (slot: Slot) => void;
  refuse: (err: Error) => void;
}

export class SlotPool {
  private free: number;
  private waiting: Waiter[] = [];
  private seq = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`a worker needs at least one Attempt slot, got ${size}`);
    this.free = size;
  }

  /** Slots in use. */
  get used(): number {
    return this.size - this.free;
  }

  get admitting(): boolean {
    return !this.closed;
  }

  /** Waits for a slot; older Events first. Throws DrainingError once admission is closed. */
  acquire(receivedAt: Date): Promise<Slot> {
    if (this.closed) return Promise.reject(new DrainingError());
    return new Promise((grant, refuse) => {
      this.waiting.push({ receivedAt: receivedAt.getTime(), seq: this.seq++, grant, refuse });
      this.waiting.sort((a, b) => a.receivedAt - b.receivedAt || a.seq - b.seq);
      this.dispatch();
    });
  }

  /** Closes admission: waiters and later requests get DrainingError. */
  close(): void {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.refuse(new DrainingError());
  }

  /** Resolves when no slot is held. */
  whenIdle(): Promise<void> {
    if (this.used === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private dispatch(): void {
    while (this.free > 0 && this.waiting.length > 0) {
      const next = this.waiting.shift()!;
      this.free--;
      let released = false;
      next.grant({
        release: () => {
          if (released) return;
          released = true;
          this.free++;
          if (this.used === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
          this.dispatch();
        },
      });
    }
  }
}
