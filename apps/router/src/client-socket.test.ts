import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { acceptClient, adoptWithOnread } from './client-socket.js';

interface Accepted {
  server: Server;
  client: Socket;
  served: Socket;
  chunks: Buffer[];
}

/** A paused-on-connect server and one client connected to it, the server side adopted. */
async function accept(onread: boolean): Promise<Accepted> {
  const server = createServer({ pauseOnConnect: true });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const chunks: Buffer[] = [];
  const served = new Promise<Socket>((resolve) =>
    server.once('connection', (accepted: Socket) => {
      const s = acceptClient(accepted, (c) => chunks.push(c), onread);
      // The 'data' path, when acceptClient kept the accepted socket.
      s.on('data', (c: Buffer) => chunks.push(c));
      resolve(s);
    }),
  );
  const client = connect(port, '127.0.0.1');
  await once(client, 'connect');
  return { server, client, served: await served, chunks };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
}

const total = (chunks: Buffer[]): string => Buffer.concat(chunks).toString();

test('an accepted connection is read through onread on this Node', async () => {
  const a = await accept(true);
  // The adopted socket never emits 'data': everything arrives through the callback.
  let dataEvents = 0;
  a.served.on('data', () => dataEvents++);
  a.client.write('hello ');
  a.client.write('world');
  await until(() => total(a.chunks) === 'hello world', 'bytes arrive in order');
  assert.equal(dataEvents, 0);
  // Views handed out stay valid after later reads (they are copies, not the shared read buffer).
  const first = a.chunks[0]!;
  const before = first.toString();
  a.client.write('x'.repeat(100_000));
  await until(() => total(a.chunks).length === 11 + 100_000, 'a large write arrives whole');
  assert.equal(first.toString(), before);
  // Writes go out as on any socket.
  a.served.write('pong');
  const [reply] = (await once(a.client, 'data')) as [Buffer];
  assert.equal(reply.toString(), 'pong');
  a.client.destroy();
  a.served.destroy();
  // The server's count of connections went back to zero: close() completes.
  await new Promise<void>((resolve) => a.server.close(() => resolve()));
});

test('pause stops reading an adopted socket until resume', async () => {
  const a = await accept(true);
  a.served.pause();
  a.client.write('held');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(total(a.chunks), '', 'nothing read while paused');
  a.served.resume();
  await until(() => total(a.chunks) === 'held', 'read after resume');
  // The peer closing ends the adopted socket like any other.
  const closed = once(a.served, 'close');
  a.client.end();
  await closed;
  await new Promise<void>((resolve) => a.server.close(() => resolve()));
});

test('without onread the accepted socket itself is resumed and emits data', async () => {
  const a = await accept(false);
  a.client.write('plain');
  await until(() => total(a.chunks) === 'plain', 'data events');
  a.client.destroy();
  a.served.destroy();
  await new Promise<void>((resolve) => a.server.close(() => resolve()));
});

test('a socket without a handle is not adopted', () => {
  const s = connect({ port: 1, host: '127.0.0.1' });
  s.on('error', () => undefined);
  s.destroy(); // no handle once destroyed
  assert.equal(
    adoptWithOnread(s, () => undefined),
    undefined,
  );
});
