// `tessera up`, `tessera down`, and the hidden `tessera supervise` that `up` runs detached. The
// local-cluster code (pg, pgctl, the sample schema) is imported only when one of these runs, so
// the everyday commands start quickly.
import { boolFlag, stringFlag } from '../args.js';
import type { Command } from '../command.js';
import { CliError } from '../errors.js';
import { DIR_FLAG } from '../flags.js';
import { layout, readClusterFile, resolveDir } from '../local/layout.js';

export const localCommands: Command[] = [
  {
    path: ['up'],
    summary:
      'start a local cluster (home node, two data nodes, each with a synchronous replica; sample schema)',
    usage: ['up [--dir DIR] [--foreground] [--no-replicas] [--trust]'],
    description:
      'Initialises three Postgres nodes from the local binaries under DIR on the first run (ports\n' +
      '15432-15434 when free), each with a synchronous streaming replica (pg_basebackup -R, ports\n' +
      '15442-15444), and starts them with two coordinators (active and standby), the router and an\n' +
      'agent per Postgres instance under a supervisor that restarts what dies; a primary that dies\n' +
      'is failed over to its replica. It loads a sample multi-tenant schema into database `app`\n' +
      '(role app). --no-replicas makes the lighter cluster of the three servers and one coordinator.\n' +
      'Passwords by default: the router asks clients for SCRAM-SHA-256 and every node asks TCP logins\n' +
      'for scram-sha-256; the generated passwords of `postgres` and `app` are kept in\n' +
      'DIR/passwords.json (mode 0600) and printed with the connection line. --trust makes a cluster\n' +
      'that asks no one for a password (any local user gets in, as superuser too). Running it again\n' +
      'reuses the data and the passwords; if the cluster runs, it prints how to connect.',
    examples: [
      'tessera up',
      'tessera up --no-replicas',
      'tessera up --trust --dir /tmp/tessera-trust',
      'tessera up --dir /tmp/tessera',
      'npm start',
    ],
    flags: {
      dir: DIR_FLAG,
      foreground: {
        type: 'boolean',
        description: 'supervise in this process and stop everything on Ctrl-C',
      },
      'no-replicas': {
        type: 'boolean',
        description: 'no replicas and one coordinator (a new cluster only)',
      },
      trust: {
        type: 'boolean',
        description: 'no passwords: the router and nodes trust every login (a new cluster only)',
      },
    },
    positionals: { min: 0, max: 0 },
    usesCoordinator: false,
    run: async ({ args, io }) =>
      (await import('../local/up.js')).up({
        dir: resolveDir(stringFlag(args, 'dir'), io.env, io.cwd),
        foreground: boolFlag(args, 'foreground'),
        noReplicas: boolFlag(args, 'no-replicas'),
        trust: boolFlag(args, 'trust'),
        io,
      }),
  },
  {
    path: ['down'],
    summary: 'stop the local cluster started by `tessera up` (its data stays)',
    usage: ['down [--dir DIR]'],
    examples: ['tessera down', 'tessera down --dir /tmp/tessera'],
    flags: { dir: DIR_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: false,
    run: async ({ args, io }) =>
      (await import('../local/down.js')).down(
        resolveDir(stringFlag(args, 'dir'), io.env, io.cwd),
        io,
      ),
  },
  {
    path: ['supervise'],
    summary: 'run the local cluster supervisor (started by `tessera up`)',
    usage: ['supervise --dir DIR'],
    examples: [],
    flags: { dir: DIR_FLAG },
    positionals: { min: 0, max: 0 },
    usesCoordinator: false,
    hidden: true,
    async run({ args, io }) {
      const l = layout(resolveDir(stringFlag(args, 'dir'), io.env, io.cwd));
      const cluster = readClusterFile(l);
      if (!cluster)
        throw new CliError(`${l.clusterFile} is missing; start the cluster with \`tessera up\``);
      const log = (m: string) => io.out(`${new Date().toISOString()} ${m}\n`);
      const { Supervisor } = await import('../local/supervisor.js');
      const { findPgBinDir } = await import('@tessera/pgctl');
      const sup = new Supervisor(l, cluster, findPgBinDir(io.env), log);
      let signalled: (s: string) => void = () => {};
      const stopRequested = new Promise<string>((resolve) => (signalled = resolve));
      for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(s, () => signalled(s));
      log(`supervisor started (pid ${process.pid}) for ${l.dir}`);
      let code = 0;
      try {
        await sup.start();
        log(`stopping on ${await stopRequested}`);
      } catch (e) {
        log(`could not start the cluster: ${e instanceof Error ? e.message : String(e)}`);
        code = 1;
      }
      await sup.stop();
      log('supervisor stopped');
      // This process exists only to supervise: leave now rather than wait on any handle a client
      // library may keep open.
      process.exit(code);
    },
  },
];
