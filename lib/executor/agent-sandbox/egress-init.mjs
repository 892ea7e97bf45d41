// Runs inside an agent's sandbox when its roster entry allows egress: bridges loopback ports of
// the sandbox's own network namespace to the unix sockets of the worker's egress gateway, then
// runs the agent and exits with its status. It ignores SIGTERM (the worker signals the agent
// itself; this process must outlive it to keep the bridges up until it exits).
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";

const bridges = JSON.parse(process.env.ATELIER_EGRESS_BRIDGES ?? "[]");
delete process.env.ATELIER_EGRESS_BRIDGES;
process.on("SIGTERM", () => undefined);
process.on("SIGINT", () => undefined);

await Promise.all(
  bridges.map(
    ({ port, socket }) =>
      new Promise((resolve, reject) => {
        const server = createServer((inbound) => {
          const outbound = connect(socket);
          inbound.pipe(outbound).pipe(inbound);
          const close = () => {
            inbound.destroy();
            outbound.destroy();
          };
          inbound.on("error", close).on("close", close);
          outbound.on("error", close).on("close", close);
        });
        server.once("error", reject);
        server.listen(port, "127.0.0.1", resolve);
      }),
  ),
);

const [file, ...args] = process.argv.slice(2);
const child = spawn(file, args, { stdio: "inherit" });
child.on("error", (err) => {
  process.stderr.write(`cannot start the agent: ${err.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + 15 : 1)));
