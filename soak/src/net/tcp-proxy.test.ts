// The link proxy on real sockets: bytes through unchanged and in order, delay added only to the
// connections its rule names, and a cut that drops connections to a target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server } from 'node:net';
import { once } from 'node:events';
import { TcpProxy } from './tcp-proxy.js';

async function echoServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port };
}

async function roundTrip(port: number, payload: Buffer): Promise<{ ms: number; back: Buffer }> {
  const s = connect({ host: '127.0.0.1', port });
  await once(s, 'connect');
  const t0 = performance.now();
  const chunks: Buffer[] = [];
  let n = 0;
  const done = new Promise<void>((resolve) =>
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      n += d.length;
      if (n >= payload.length) resolve();
    }),
  );
  s.write(payload);
  await done;
  const ms = performance.now() - t0;
  s.destroy();
  return { ms, back: Buffer.concat(chunks) };
}

test('bytes go through unchanged; a delay rule slows only the connections it names', async () => {
  const echo = await echoServer();
  const proxy = new TcpProxy(() => ({ host: '127.0.0.1', port: echo.port }));
  const port = await proxy.listen('127.0.0.1', 0);
  try {
    const payload = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    const plain = await roundTrip(port, payload);
    assert.ok(plain.back.equals(payload));
    proxy.setRules([{ sources: ['10.9.9.9'], delayMs: 300, jitterMs: 0, loss: 0, stallMs: 200 }]);
    const other = await roundTrip(port, Buffer.from('x'));
    assert.ok(other.ms < 300, `a rule for another source must not delay (${other.ms} ms)`);
    proxy.setRules([{ delayMs: 150, jitterMs: 0, loss: 0, stallMs: 200 }]);
    const slow = await roundTrip(port, payload);
    assert.ok(slow.back.equals(payload), 'delayed bytes arrive whole and in order');
    assert.ok(slow.ms >= 290, `two delayed directions take at least 2 x 150 ms (${slow.ms} ms)`);
    proxy.setRules([{ delayMs: 0, jitterMs: 0, loss: 1, stallMs: 200 }]);
    const lossy = await roundTrip(port, Buffer.from('y'));
    assert.ok(
      lossy.ms >= 390,
      `a lost segment each way stalls for its retransmission (${lossy.ms} ms)`,
    );
  } finally {
    await proxy.close();
    echo.server.close();
  }
});

test('cutExcept drops the connections to other targets', async () => {
  const echo = await echoServer();
  const proxy = new TcpProxy(() => ({ host: '127.0.0.1', port: echo.port }));
  const port = await proxy.listen('127.0.0.1', 0);
  try {
    const s = connect({ host: '127.0.0.1', port });
    s.on('error', () => {});
    await once(s, 'connect');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(proxy.connections, 1);
    assert.equal(proxy.cutExcept({ host: '127.0.0.1', port: echo.port }), 0);
    assert.equal(proxy.cutExcept({ host: '127.0.0.1', port: 1 }), 1);
    await once(s, 'close');
  } finally {
    await proxy.close();
    echo.server.close();
  }
});
