// `tessera nodes list|add|remove`: the Postgres servers the cluster is spread over.
import { NodeRole } from '@tessera/proto';
import type { Command } from '../command.js';
import { JSON_FLAG } from '../flags.js';
import { boolFlag, parseHostPort, stringFlag } from '../args.js';
import { nodeView, nodesTable, toJson } from '../format.js';
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
      const nodes = catalog.nodes.map(nodeView);
      io.out(boolFlag(args, 'json') ? toJson({ epoch: catalog.epoch, nodes }) : nodesTable(nodes));
      return 0;
    },
  },
  {
    path: ['nodes', 'add'],
    summary: 'register a Postgres server as a node',
    usage: [
      'nodes add NAME HOST:PORT [--home] [--replica HOST:PORT] [--register-only]',
      'nodes add NAME HOST:PORT [--yes] [--wait] [--json]',
    ],
    description:
      'Registers the server in the catalog as a data node (or, with --home, the one home node that\n' +
      'holds global tables). The server must already run with wal_level=logical and\n' +
      'max_prepared_transactions > 0. On a cluster that has tables, a mover job first copies the\n' +
      "home node's roles (with their SCRAM verifiers), every table definition and the reference\n" +
      'tables (kept in sync until it joins), then makes it active; `tessera rebalance` then moves\n' +
      'ranges to it. --register-only only registers it.',
    examples: [
      'tessera nodes add data3 10.0.0.13:5432',
      'tessera nodes add data4 10.0.0.14:5432 --replica 10.0.0.24:5432',
    ],
    flags: {
      home: { type: 'boolean', description: 'make it the home node (there is exactly one)' },
      replica: {
        type: 'string',
        value: 'HOST:PORT',
        description: "address of the node's streaming replica",
      },
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
      });
      io.out(`added node ${name} at ${host}:${port} (epoch ${res.epoch})\n`);
      return 0;
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
