// `tessera status`: the whole catalog at one epoch, plus the routers, as tables or one JSON
// document. Tools read node addresses from here to reach nodes directly.
import type { Command } from '../command.js';
import { JSON_FLAG } from '../flags.js';
import { boolFlag } from '../args.js';
import {
  keyspacesTable,
  nodesTable,
  rangesTable,
  routersTable,
  statusView,
  tablesTable,
  toJson,
} from '../format.js';

export const statusCommands: Command[] = [
  {
    path: ['status'],
    summary: 'show the cluster: nodes, keyspaces and their ranges, tables, routers',
    usage: ['status [--json]'],
    examples: ['tessera status', "tessera status --json | jq '.nodes[] | .address'"],
    flags: { json: JSON_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run({ args, io, coordinator }) {
      const c = coordinator();
      const [catalog, routers] = await Promise.all([
        c.catalog.getCatalog({}),
        c.routers.listRouters({}),
      ]);
      const view = statusView(catalog, routers.routers);
      if (boolFlag(args, 'json')) {
        io.out(toJson(view));
        return 0;
      }
      const ranges = view.keyspaces.flatMap((k) => k.ranges);
      io.out(
        [
          `cluster ${view.clusterUid || '(unnamed)'}   epoch ${view.epoch}   coordinator ${c.address}\n`,
          `Nodes\n${nodesTable(view.nodes)}`,
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
