// `tessera status`: the whole catalog at one epoch, plus the routers, as tables or one JSON
// document. Tools read node addresses from here to reach nodes directly.
import type { Command } from '../command.js';
import { JSON_FLAG } from '../flags.js';
import { boolFlag } from '../args.js';
import type { ClusterHealth } from '@tessera/proto';
import {
  agentsTable,
  keyspacesTable,
  nodesTable,
  rangesTable,
  replicationTable,
  routersTable,
  statusView,
  tablesTable,
  toJson,
} from '../format.js';

export const statusCommands: Command[] = [
  {
    path: ['status'],
    summary:
      'show the cluster: nodes with their replicas and agents, keyspaces and their ranges, tables, routers',
    usage: ['status [--json]'],
    examples: ['tessera status', "tessera status --json | jq '.nodes[] | .address'"],
    flags: { json: JSON_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const c = coordinator();
      const [catalog, routers, health] = await Promise.all([
        c.catalog.getCatalog({}),
        c.routers.listRouters({}),
        // An older coordinator without AgentService.GetHealth: the rest still shows.
        c.agents.getHealth({}).catch((): ClusterHealth | undefined => undefined),
      ]);
      const view = statusView(catalog, routers.routers, health);
      if (boolFlag(args, 'json')) {
        io.out(toJson(view));
        return 0;
      }
      const ranges = view.keyspaces.flatMap((k) => k.ranges);
      io.out(
        [
          `cluster ${view.clusterUid || '(unnamed)'}   epoch ${view.epoch}   coordinator ${c.address}\n`,
          `Nodes\n${nodesTable(view.nodes)}`,
          `Replication\n${replicationTable(view.nodes)}`,
          `Agents\n${agentsTable(view.agents)}`,
          `Keyspaces\n${keyspacesTable(view.keyspaces)}`,
          `Ranges\n${rangesTable(ranges)}`,
          `Tables\n${tablesTable(view.tables)}`,
          `Routers\n${routersTable(view.routers)}`,
        ].join('\n'),
      );
      return 0;
    },
  },
];
