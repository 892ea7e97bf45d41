/** What a processor logs to (the worker passes its pino logger); silent when none is given. */
export interface WorkerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const SILENT_LOG: WorkerLog = { info() {}, warn() {}, error() {} };
