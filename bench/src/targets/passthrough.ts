// The bare pass-through proxy, run as its own process: accept, connect to Postgres, pipe both
// ways, nothing else. It is the floor for what any Node proxy costs on this machine, so the
// router's overhead can be split into "being a Node proxy" and "routing".
// Usage: node passthrough.js --listen-port PORT --upstream HOST:PORT   (prints {"port":N} when up)
import { connect, createServer, type Socket } from 'node:net';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const upstream = arg('--upstream') ?? '';
const sep = upstream.lastIndexOf(':');
const upHost = upstream.slice(0, sep);
const upPort = Number(upstream.slice(sep + 1));
if (sep <= 0 || !Number.isInteger(upPort)) {
  process.stderr.write('passthrough: --upstream HOST:PORT is required\n');
  process.exit(2);
}

// Nagle's algorithm would hold small protocol messages back: Postgres and pgbouncer disable it.
const server = createServer({ noDelay: true }, (client: Socket) => {
  const backend = connect({ host: upHost, port: upPort, noDelay: true });
  const close = () => {
    client.destroy();
    backend.destroy();
  };
  client.on('error', close);
  backend.on('error', close);
  client.on('close', close);
  backend.on('close', close);
  client.pipe(backend);
  backend.pipe(client);
});

server.listen(Number(arg('--listen-port') ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0 })}\n`,
  );
});
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
