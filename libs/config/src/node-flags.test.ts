import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shebangNodeFlags } from './node-flags.js';

test('the flags on a `#!/usr/bin/env -S node` line, in order', () => {
  assert.deepEqual(shebangNodeFlags('#!/usr/bin/env -S node --lite-mode\nimport x;'), [
    '--lite-mode',
  ]);
  assert.deepEqual(
    shebangNodeFlags('#!/usr/bin/env -S node --lite-mode --max-semi-space-size=2\n'),
    ['--lite-mode', '--max-semi-space-size=2'],
  );
});

test('no flags for a plain node line, another program or no #! at all', () => {
  assert.deepEqual(shebangNodeFlags('#!/usr/bin/env node\nimport x;'), []);
  assert.deepEqual(shebangNodeFlags('#!/usr/bin/env -S node\n'), []);
  assert.deepEqual(shebangNodeFlags('#!/usr/bin/env -S python3 --x\n'), []);
  assert.deepEqual(shebangNodeFlags('// no shebang\n#!/usr/bin/env -S node --x'), []);
  assert.deepEqual(shebangNodeFlags(''), []);
});
