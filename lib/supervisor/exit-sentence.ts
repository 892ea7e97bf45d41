/** How a child of `npm start` ended, in words: its exit code or the signal that killed it. */
export function exitSentence(label: string, code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `${label} was killed by ${signal}`;
  if (code === 0) return `${label} exited (code 0)`;
  return `${label} exited with code ${code ?? "unknown"}`;
}
