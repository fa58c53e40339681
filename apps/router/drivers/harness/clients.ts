// The clients of the matrix: for each, what it needs installed, how its program is built (once,
// into a temporary directory) and run. A program reads its database from DRV_URL (and the libpq
// variables PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE) and prints one line per operation.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { mustExec } from './exec.js';

export const PROGRAMS = join(import.meta.dirname, '..', 'programs');
const PYTHON = '/usr/bin/python3';
const JDBC_CLASSPATH = [
  '/usr/share/java/postgresql.jar',
  '/usr/share/java/HikariCP.jar',
  '/usr/share/java/slf4j-api.jar',
  '/usr/share/java/slf4j-nop.jar',
];

export interface ClientSpec {
  id: string;
  title: string;
  /** Which table of docs/compatibility.md it belongs to. */
  group: 'Drivers' | 'ORMs' | 'Tools';
  /** Files that must exist (installed by install.sh). */
  requires: string[];
  /** Databases besides its main one (DRV_URL_<NAME> on the same side). */
  extraDatabases?: string[];
  /** Databases on the plain server whatever the side (DRV_SCRATCH_<NAME>_URL), empty at start. */
  scratchDatabases?: string[];
  build?(workDir: string): Promise<void>;
  command(workDir: string): { cmd: string; args: string[] };
  timeoutMs: number;
  /** Whether the harness compares the tables it left (state.ts); off where rows hold clock times. */
  compareState?: boolean;
}

const node = (file: string) => (): { cmd: string; args: string[] } => ({
  cmd: process.execPath,
  // tsx resolved here: the program runs in a work directory outside the repository.
  args: ['--import', import.meta.resolve('tsx'), join(PROGRAMS, 'node', file)],
});
const python = (file: string) => (): { cmd: string; args: string[] } => ({
  cmd: PYTHON,
  args: [join(PROGRAMS, 'python', file)],
});
const shell = (file: string) => (): { cmd: string; args: string[] } => ({
  cmd: 'bash',
  args: [join(PROGRAMS, 'shell', file)],
});

export const CLIENTS: readonly ClientSpec[] = [
  {
    id: 'psql',
    title: 'psql',
    group: 'Tools',
    requires: ['/usr/bin/psql'],
    command: shell('psql.sh'),
    timeoutMs: 120_000,
  },
  {
    id: 'pgbench',
    title: 'pgbench',
    group: 'Tools',
    requires: ['/usr/bin/pgbench', '/usr/bin/psql'],
    command: shell('pgbench.sh'),
    timeoutMs: 240_000,
    // pgbench_history.mtime is the time of each transaction; the program checks the sums instead.
    compareState: false,
  },
  {
    id: 'pg_dump',
    title: 'pg_dump / pg_restore',
    group: 'Tools',
    requires: ['/usr/bin/pg_dump', '/usr/bin/pg_restore', '/usr/bin/psql'],
    extraDatabases: ['restore'],
    scratchDatabases: ['copy', 'source'],
    command: shell('pg-dump.sh'),
    timeoutMs: 120_000,
  },
  {
    id: 'node-postgres',
    title: 'node-postgres (pg, pg-cursor, pg-copy-streams)',
    group: 'Drivers',
    requires: [],
    command: node('node-postgres.ts'),
    timeoutMs: 120_000,
  },
  {
    id: 'postgres.js',
    title: 'postgres.js',
    group: 'Drivers',
    requires: [],
    command: node('postgresjs.ts'),
    timeoutMs: 120_000,
  },
  {
    id: 'psycopg2',
    title: 'psycopg2 (Debian python3-psycopg2)',
    group: 'Drivers',
    requires: [PYTHON],
    command: python('psycopg2_app.py'),
    timeoutMs: 120_000,
  },
  {
    id: 'psycopg3',
    title: 'psycopg 3 (Debian python3-psycopg, python3-psycopg-pool)',
    group: 'Drivers',
    requires: [PYTHON],
    command: python('psycopg3_app.py'),
    timeoutMs: 120_000,
  },
  {
    id: 'asyncpg',
    title: 'asyncpg (Debian python3-asyncpg)',
    group: 'Drivers',
    requires: [PYTHON],
    command: python('asyncpg_app.py'),
    timeoutMs: 120_000,
  },
  {
    id: 'pgjdbc',
    title: 'pgjdbc (Debian libpostgresql-jdbc-java) with HikariCP',
    group: 'Drivers',
    requires: ['/usr/bin/javac', '/usr/bin/java', ...JDBC_CLASSPATH],
    async build(workDir) {
      const out = join(workDir, 'java');
      mkdirSync(out, { recursive: true });
      await mustExec(
        'javac',
        ['-d', out, '-cp', JDBC_CLASSPATH.join(':'), join(PROGRAMS, 'java', 'Drivers.java')],
        { timeoutMs: 120_000 },
      );
    },
    command: (workDir) => ({
      cmd: 'java',
      args: ['-cp', [join(workDir, 'java'), ...JDBC_CLASSPATH].join(':'), 'Drivers'],
    }),
    timeoutMs: 120_000,
  },
  {
    id: 'pgx',
    title: 'pgx v4 (Debian golang-github-jackc-pgx-v4-dev)',
    group: 'Drivers',
    requires: ['/usr/bin/go', '/usr/share/gocode/src/github.com/jackc/pgx/v4'],
    async build(workDir) {
      // GOPATH mode against Debian's packaged sources: offline, no module proxy.
      const pkg = await mustExec(
        'dpkg-query',
        ['-W', '-f', '${Version}', 'golang-github-jackc-pgx-v4-dev'],
        {
          timeoutMs: 10_000,
        },
      );
      const ldflags = `-X main.pgxVersion=${pkg.stdout.trim() || 'v4'}`;
      await mustExec(
        'go',
        ['build', '-ldflags', ldflags, '-o', join(workDir, 'pgx-program'), '.'],
        {
          cwd: join(PROGRAMS, 'go'),
          env: { GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '', GOPROXY: 'off' },
          timeoutMs: 300_000,
        },
      );
    },
    command: (workDir) => ({ cmd: join(workDir, 'pgx-program'), args: [] }),
    timeoutMs: 120_000,
  },
  {
    id: 'sqlalchemy',
    title: 'SQLAlchemy ORM (Debian python3-sqlalchemy, psycopg2)',
    group: 'ORMs',
    requires: [PYTHON],
    command: python('sqlalchemy_app.py'),
    timeoutMs: 120_000,
  },
  {
    id: 'django',
    title: 'Django ORM (Debian python3-django, psycopg2)',
    group: 'ORMs',
    requires: [PYTHON],
    command: python('django_app.py'),
    timeoutMs: 120_000,
  },
];
