// The soak's network for real (root only): namespaces, addresses and point-to-point links come
// up; a partition cuts a node off from one peer and not another; the heal restores it; a dead
// run's namespaces (and what runs in them) are swept; nothing is left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { Network, inNamespace, netnsSupport, sweepStaleNamespaces } from './netns.js';
import { planTopology } from './topology.js';

const support = netnsSupport();
const skip = support.ok ? false : `needs network namespaces: ${support.reason}`;

/** From inside `ns` (or the root namespace), whether a TCP connection to addr:port opens in 1 s. */
function reaches(ns: string | undefined, host: string, port: number): string {
  const code = `const s=require('net').connect({host:'${host}',port:${port}});s.setTimeout(1000);s.on('connect',()=>{console.log('open');process.exit(0)});s.on('timeout',()=>{console.log('timeout');process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)})`;
  const [cmd, args] = inNamespace(ns, process.execPath, ['-e', code]);
  return spawnSync(cmd, args, { encoding: 'utf8' }).stdout.trim();
}

test('namespaces, links, a partition per peer and its heal', { skip }, async () => {
  const t = planTopology(
    [
      { name: 'home', kind: 'node' },
      { name: 'coord0', kind: 'coordinator' },
      { name: 'router0', kind: 'router' },
    ],
    // a subnet of its own, away from the runs' (1..250 come from pids)
    251,
    process.pid,
  );
  const net = new Network(t);
  const [home, coord, router] = t.members as [
    (typeof t.members)[0],
    (typeof t.members)[0],
    (typeof t.members)[0],
  ];
  await net.up();
  const [cmd, args] = inNamespace(home.ns, process.execPath, [
    '-e',
    `require('net').createServer((s)=>s.end()).listen(7777,'${home.address}',()=>console.log('up'))`,
  ]);
  const server = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  server.stderr.pipe(process.stderr);
  try {
    await new Promise((resolve) => server.stdout.once('data', resolve));
    assert.equal(reaches(undefined, home.address, 7777), 'open', 'the harness reaches the node');
    assert.equal(reaches(router.ns, home.address, 7777), 'open', 'the router reaches the node');
    assert.equal(reaches(coord.ns, home.address, 7777), 'open', 'the coordinator reaches the node');
    assert.equal(
      reaches(router.ns, coord.address, 7777),
      'ENETUNREACH',
      'routers have no link to coordinators',
    );

    await net.partition('home', ['router0']);
    assert.equal(
      reaches(router.ns, home.address, 7777),
      'timeout',
      'cut from the router: its packets are dropped',
    );
    assert.equal(reaches(coord.ns, home.address, 7777), 'open', 'still reached by the coordinator');
    assert.equal(reaches(undefined, home.address, 7777), 'open', 'still reached by the harness');

    await net.heal('home', ['router0']);
    // A veth end just set up may take a moment to carry packets (a loaded machine: EHOSTUNREACH).
    let healed = reaches(router.ns, home.address, 7777);
    for (let i = 0; i < 30 && healed !== 'open'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      healed = reaches(router.ns, home.address, 7777);
    }
    assert.equal(healed, 'open', 'healed');
  } finally {
    server.kill('SIGKILL');
    net.downSync();
  }
  const left = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  assert.ok(!left.includes(`tsoak-251-${process.pid}-`), left);
});

test("a dead run's namespaces and their processes are swept", { skip }, async () => {
  const ns = 'tsoak-252-999999-x';
  execFileSync('ip', ['netns', 'add', ns]);
  const [cmd, args] = inNamespace(ns, process.execPath, ['-e', 'setTimeout(()=>{}, 600000)']);
  const orphan = spawn(cmd, args, { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  const exited = new Promise((resolve) => orphan.once('exit', resolve));
  sweepStaleNamespaces();
  await exited;
  assert.ok(!execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).includes(ns));
});
