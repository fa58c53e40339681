// `tessera nodes list|add|remove`: the Postgres servers the cluster is spread over.
import { HaMode, NodeRole, ReplicaState } from '@tessera/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import type { Command } from '../command.js';
import { JSON_FLAG } from '../flags.js';
import { boolFlag, parseHostPort, stringFlag } from '../args.js';
import { HA_MODE_CHOICES, nodeView, nodesTable, replicaStateName, toJson } from '../format.js';
import { WAIT_FLAG, YES_FLAG, confirm, nodeAddJob } from './job-requests.js';
import { afterSubmit, submit } from './moves.js';

export const nodesCommands: Command[] = [
  {
    path: ['nodes', 'list'],
    summary: 'list the nodes with role, state and address',
    usage: ['nodes list [--json]'],
    examples: ['tessera nodes list', 'tessera nodes list --json'],
    flags: { json: JSON_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const catalog = await coordinator().catalog.getCatalog({});
      const nodes = catalog.nodes.map((n) => nodeView(n));
      io.out(boolFlag(args, 'json') ? toJson({ epoch: catalog.epoch, nodes }) : nodesTable(nodes));
      return 0;
    },
  },
  {
    path: ['nodes', 'add'],
    summary: 'register a Postgres server as a node',
    usage: [
      'nodes add NAME HOST:PORT [--home] [--replica HOST:PORT [--replica-name NAME]] [--ha MODE]',
      'nodes add NAME HOST:PORT [--register-only] [--yes] [--wait] [--json]',
    ],
    description:
      'Registers the server in the catalog as a data node (or, with --home, the one home node that\n' +
      'holds global tables). The server must already run with wal_level=logical and\n' +
      'max_prepared_transactions > 0. On a cluster that has tables, a mover job first copies the\n' +
      "home node's roles (with their SCRAM verifiers), every table definition and the reference\n" +
      'tables (kept in sync until it joins), then makes it active; `tessera rebalance` then moves\n' +
      'ranges to it. --register-only only registers it. A --replica streams from it\n' +
      '(pg_basebackup -R, with wal_log_hints=on) under the application_name --replica-name\n' +
      '(default NAME_HOST_PORT, lower case, other characters as _); it joins the durable sync set\n' +
      "once it has caught up. --ha says who fails the node over: native (Tessera's agents,\n" +
      'default), patroni or cnpg (Tessera follows that engine).',
    examples: [
      'tessera nodes add data3 10.0.0.13:5432',
      'tessera nodes add data4 10.0.0.14:5432 --replica 10.0.0.24:5432',
      'tessera nodes add data5 10.0.0.15:5432 --replica 10.0.0.25:5432 --ha patroni',
    ],
    flags: {
      home: { type: 'boolean', description: 'make it the home node (there is exactly one)' },
      replica: {
        type: 'string',
        value: 'HOST:PORT',
        description: "address of the node's streaming replica",
      },
      'replica-name': {
        type: 'string',
        value: 'NAME',
        description: 'the application_name the replica streams under',
      },
      ha: { type: 'string', value: 'MODE', description: `who fails it over: ${HA_MODE_CHOICES}` },
      'register-only': { type: 'boolean', description: 'only register it (copy nothing)' },
      yes: YES_FLAG,
      wait: WAIT_FLAG,
      json: JSON_FLAG,
    },
    positionals: { min: 2, max: 2 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const [name = '', address = ''] = args.positionals;
      const { host, port } = parseHostPort(address, 'the node address');
      const replicaText = stringFlag(args, 'replica');
      const replica =
        replicaText === undefined ? undefined : parseHostPort(replicaText, '--replica');
      const copies =
        !boolFlag(args, 'home') &&
        !boolFlag(args, 'register-only') &&
        replica === undefined &&
        (await coordinator().catalog.getCatalog({})).tables.length > 0;
      if (copies) {
        const ctx = { args, io, coordinator };
        await confirm(
          ctx,
          `Add node ${name} at ${host}:${port} (copying roles, schema and reference tables to it)?`,
        );
        return afterSubmit(
          ctx,
          await submit(ctx, nodeAddJob(name, host, port)),
          `adding node ${name}`,
        );
      }
      const res = await coordinator().admin.addNode({
        name,
        host,
        port,
        role: boolFlag(args, 'home') ? NodeRole.HOME : NodeRole.DATA,
        replicaHost: replica?.host ?? '',
        replicaPort: replica?.port ?? 0,
        replicaName: stringFlag(args, 'replica-name') ?? '',
        haMode: haMode(stringFlag(args, 'ha')),
      });
      io.out(`added node ${name} at ${host}:${port} (epoch ${res.epoch})\n`);
      return 0;
    },
  },
  {
    path: ['nodes', 'add-replica'],
    summary: 'register a streaming replica of a node',
    usage: ['nodes add-replica NAME HOST:PORT [--replica-name NAME]'],
    description:
      "Registers a standby that already streams from the node's primary. It joins the durable\n" +
      'sync set (and can be promoted) once it is named in synchronous_standby_names, streams as\n' +
      'sync and has caught up.',
    examples: ['tessera nodes add-replica data3 10.0.0.23:5432'],
    flags: {
      'replica-name': {
        type: 'string',
        value: 'NAME',
        description: 'the application_name it streams under',
      },
    },
    positionals: { min: 2, max: 2 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const [name = '', address = ''] = args.positionals;
      const { host, port } = parseHostPort(address, 'the replica address');
      const res = await coordinator().admin.addReplica({
        name,
        host,
        port,
        replicaName: stringFlag(args, 'replica-name') ?? '',
      });
      io.out(`added replica ${host}:${port} of node ${name} (epoch ${res.epoch})\n`);
      return 0;
    },
  },
  {
    path: ['nodes', 'rejoin'],
    summary: 'make a fenced former primary a replica of the current primary again',
    usage: ['nodes rejoin NAME [HOST:PORT] [--no-wait]'],
    description:
      'After a failover the former primary is fenced: its agent keeps it stopped and nothing routes\n' +
      'to it. Rejoin has its agent rewind it onto the current primary (pg_rewind, or a fresh base\n' +
      'backup when rewinding is impossible) and start it as a standby. Then the command waits until\n' +
      'it is a synchronous replica again, eligible for the next failover (--no-wait: it does not).\n' +
      'HOST:PORT names the instance when the node has several fenced ones (or to re-clone a replica).',
    examples: ['tessera nodes rejoin data1', 'tessera nodes rejoin data1 127.0.0.1:15443'],
    flags: {
      'no-wait': { type: 'boolean', description: 'return once it streams, not once it is sync' },
    },
    positionals: { min: 1, max: 2 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const [name = '', address] = args.positionals;
      const at = address === undefined ? undefined : parseHostPort(address, 'the instance address');
      const c = coordinator();
      io.out(`rejoining ${address ?? `the fenced former primary of ${name}`} ...\n`);
      const res = await c.admin.rejoinNode(
        { name, host: at?.host ?? '', port: at?.port ?? 0 },
        { deadlineMs: REJOIN_DEADLINE_MS },
      );
      io.out(`it streams from the primary again (epoch ${res.epoch})\n`);
      if (boolFlag(args, 'no-wait')) return 0;
      const deadline = Date.now() + SYNC_WAIT_MS;
      let last = '';
      for (;;) {
        const node = (await c.catalog.getCatalog({})).nodes.find((n) => n.name === name);
        const r = node?.replicas.find((x) =>
          at ? x.host === at.host && x.port === at.port : x.state !== ReplicaState.FENCED,
        );
        const state = r ? replicaStateName(r.state) : 'gone';
        if (r?.state === ReplicaState.SYNC) {
          io.out(`${r.host}:${r.port} is a synchronous replica of ${name} again\n`);
          return 0;
        }
        if (state !== last) io.out(`  ${state}\n`);
        last = state;
        if (Date.now() > deadline) {
          io.err(
            `tessera: it is not synchronous after ${SYNC_WAIT_MS / 1000} s (state: ${state}); see tessera status\n`,
          );
          return 1;
        }
        await sleep(500);
      }
    },
  },
  {
    path: ['nodes', 'remove'],
    summary: 'forget a node (refused while it still owns a range)',
    usage: ['nodes remove NAME'],
    examples: ['tessera nodes remove data3'],
    flags: {},
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const [name = ''] = args.positionals;
      const res = await coordinator().admin.removeNode({ name });
      io.out(`removed node ${name} (epoch ${res.epoch})\n`);
      return 0;
    },
  },
];

const REJOIN_DEADLINE_MS = 30 * 60_000;
const SYNC_WAIT_MS = 10 * 60_000;

function haMode(text: string | undefined): HaMode {
  switch (text) {
    case undefined:
    case 'native':
      return HaMode.NATIVE;
    case 'patroni':
      return HaMode.PATRONI;
    case 'cnpg':
      return HaMode.CNPG;
    default:
      throw new UsageError(`--ha must be one of ${HA_MODE_CHOICES}, not "${text}"`);
  }
}
