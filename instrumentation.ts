// Next.js runs `register` once when the web process starts (`next start`), before any request.
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startWebProcess } = await import("./app/_server/web-start");
  await startWebProcess();
}
