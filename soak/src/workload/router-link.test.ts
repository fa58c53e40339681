import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { RETURN_EVERY_MS, RouterLink } from './router-link.js';

class FakeConn {
  ended = false;
  constructor(readonly router: number) {}
  end(): Promise<void> {
    this.ended = true;
    return Promise.resolve();
  }
}

/**
 * Two routers; `up[i]` says whether router i accepts connections; time moves by hand; while
 * `gate.held` is set, attempts answer only once it resolves.
 */
function fixture(own: number) {
  const up = [true, true];
  let nowMs = 0;
  const attempts: number[] = [];
  const made: FakeConn[] = [];
  const gate: { held?: Promise<void> } = {};
  const link = new RouterLink<FakeConn>(
    own,
    2,
    async (at) => {
      attempts.push(at);
      await gate.held;
      if (!up[at]) throw new Error('refused');
      const c = new FakeConn(at);
      made.push(c);
      return c;
    },
    () => nowMs,
  );
  return { up, link, attempts, made, gate, advance: (ms: number) => (nowMs += ms) };
}

test('a client whose router is down works through the next one', async () => {
  const f = fixture(1);
  f.up[1] = false;
  assert.equal(await f.link.connection(), undefined);
  const c = await f.link.connection();
  assert.equal(c?.router, 0);
  assert.equal(f.link.at, 0);
});

test('it goes back to its own router once that answers again, between operations', async () => {
  const f = fixture(1);
  f.up[1] = false;
  await f.link.connection();
  const other = (await f.link.connection())!;
  // Its own is still down: tried at most once per RETURN_EVERY_MS, and the client stays put.
  f.advance(RETURN_EVERY_MS);
  assert.equal(await f.link.connection(), other);
  await tick();
  assert.equal(await f.link.connection(), other);
  assert.deepEqual(f.attempts, [1, 0, 1]);
  // Back up: the next try connects in the background, the call after it switches.
  f.up[1] = true;
  f.advance(RETURN_EVERY_MS / 2);
  assert.equal(await f.link.connection(), other);
  assert.deepEqual(f.attempts, [1, 0, 1], 'not before RETURN_EVERY_MS has passed');
  f.advance(RETURN_EVERY_MS / 2);
  assert.equal(await f.link.connection(), other);
  await tick();
  const own = (await f.link.connection())!;
  assert.equal(own.router, 1);
  assert.equal(f.link.at, 1);
  assert.ok(other.ended, 'the connection to the other router is closed');
  // On its own router it tries nothing more.
  f.advance(10 * RETURN_EVERY_MS);
  assert.equal(await f.link.connection(), own);
  assert.deepEqual(f.attempts, [1, 0, 1, 1]);
});

test('a drop sends the client to its own router first', async () => {
  const f = fixture(1);
  f.up[1] = false;
  await f.link.connection();
  await f.link.connection();
  f.up[1] = true;
  f.link.drop();
  assert.equal((await f.link.connection())?.router, 1);
});

test('a returning connection that arrives after a drop or after close is closed, not leaked', async () => {
  const f = fixture(1);
  f.up[1] = false;
  await f.link.connection();
  await f.link.connection();
  f.up[1] = true;
  f.advance(RETURN_EVERY_MS);
  let arrive = (): void => undefined;
  // The background attempt answers only once the client reconnected after a drop.
  f.gate.held = new Promise<void>((resolve) => (arrive = resolve));
  await f.link.connection(); // starts the background attempt
  f.gate.held = undefined;
  f.link.drop();
  const own = (await f.link.connection())!;
  assert.equal(own.router, 1);
  arrive();
  await tick();
  assert.equal(await f.link.connection(), own, 'the late one is not swapped in');
  const late = f.made.at(-1)!;
  assert.notEqual(late, own);
  assert.ok(late.ended, 'and it is closed');

  const g = fixture(1);
  g.up[1] = false;
  await g.link.connection();
  const other = (await g.link.connection())!;
  g.up[1] = true;
  g.advance(RETURN_EVERY_MS);
  await g.link.connection();
  await g.link.close();
  assert.ok(other.ended);
  assert.deepEqual(g.attempts, [1, 0, 1]);
  assert.ok(
    g.made.every((c) => c.ended),
    'the one made in the background too',
  );
});
