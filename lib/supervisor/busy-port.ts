import { createServer } from "node:net";

/** A port the supervisor needs and what it is for ("the dashboard (PORT)"). */
export interface NeededPort {
  port: number;
  purpose: string;
  /** The variable that chooses another one. */
  variable: string;
}

/** Whether something already listens on `port` (any address): a trial listen on it fails. */
export function isPortBusy(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE" || err.code === "EACCES") resolve(true);
      else reject(err);
    });
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/** The one sentence for the first busy port, or null when every port is free. */
export async function busyPortSentence(ports: NeededPort[]): Promise<string | null> {
  for (const needed of ports) {
    if (await isPortBusy(needed.port)) {
      return `atelier: port ${needed.port}, which ${needed.purpose} needs, is already in use (another \`npm start\` still running?): stop what holds it, or choose another with ${needed.variable}=<port>.`;
    }
  }
  return null;
}
