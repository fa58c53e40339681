// One lint configuration for every project: typescript-eslint's recommended rules plus a few
// that keep hot paths and error handling honest, and the layering (docs/architecture.md,
// "Layering"): Nx tags in each package.json, checked by @nx/enforce-module-boundaries, and the
// imports a pure library may never make.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Libraries that decide and do no I/O (tag type:pure). */
const PURE_LIBS = ['pg-hash', 'keyspace', 'sql', 'merge', 'pg-wire', 'config', 'twopc'];
const pureSources = PURE_LIBS.map((l) => `libs/${l}/src/**/*.ts`);

/**
 * Test support inside a project: tests and the helpers only tests import. A pure library's tests
 * may start real Postgres servers (@tessera/testkit, `pg`) and a real coordinator
 * (@tessera/proto); its shipped code may not, and may not import these files either.
 */
const TEST_SUPPORT = ['**/*.test.ts', '**/*.itest.ts', '**/*.testutil.ts', '**/*.test-support.ts'];
const pureTestSupport = [
  ...PURE_LIBS.flatMap((l) => TEST_SUPPORT.map((t) => `libs/${l}/src/${t}`)),
  ...PURE_LIBS.map((l) => `libs/${l}/src/testing/**/*.ts`),
];

/** Who may depend on whom. Libraries never depend on apps or tools; nothing depends on a tool. */
const boundaries = (pureMayUse) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      { sourceTag: 'type:pure', onlyDependOnLibsWithTags: pureMayUse },
      { sourceTag: 'type:io', onlyDependOnLibsWithTags: ['type:pure', 'type:io'] },
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:pure', 'type:io', 'type:app'] },
      {
        sourceTag: 'type:tool',
        onlyDependOnLibsWithTags: ['type:pure', 'type:io', 'type:app', 'type:tool'],
      },
    ],
  },
];

const NO_IO = 'is I/O; a pure library (type:pure) only decides (docs/architecture.md, "Layering")';
/** Drivers, and node modules that talk to the outside world: none belongs in a pure library. */
const IO_MODULES = ['pg', 'postgres'].concat(
  ['net', 'tls', 'dgram', 'http', 'https', 'http2', 'child_process', 'fs', 'fs/promises'].flatMap(
    (m) => [m, `node:${m}`],
  ),
);
const GRPC = {
  group: ['@grpc/*', '@bufbuild/*'],
  message:
    'gRPC and protobuf are I/O; a pure library (type:pure) only decides ' +
    '(docs/architecture.md, "Layering"): convert to domain types in an io library.',
};
const TEST_SUPPORT_IMPORT = {
  group: ['**/testing/*', '*.testutil.js', '*.test-support.js'],
  message: 'test support is for tests; shipped code may not import it.',
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/gen/**', '**/node_modules/**', '.tessera/**', '**/bin/*.js'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: { '@nx/enforce-module-boundaries': boundaries(['type:pure']) },
  },
  {
    files: pureSources,
    ignores: pureTestSupport,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: IO_MODULES.map((name) => ({ name, message: `\`${name}\` ${NO_IO}.` })),
          patterns: [GRPC, TEST_SUPPORT_IMPORT],
        },
      ],
    },
  },
  {
    files: pureTestSupport,
    rules: {
      '@nx/enforce-module-boundaries': boundaries(['type:pure', 'type:io']),
      'no-restricted-imports': ['error', { patterns: [GRPC] }],
    },
  },
);
