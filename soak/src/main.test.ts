// `npm run soak -- check HISTORY` as a person runs it: the exit code and the last line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CraftedHistory, listRow } from './checker/crafted.js';
import { REPO_ROOT } from './entry.js';

function check(h: CraftedHistory): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-soak-check-'));
  try {
    const file = join(dir, 'history.jsonl');
    writeFileSync(file, h.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const r = spawnSync(
      process.execPath,
      [join(REPO_ROOT, 'soak', 'bin', 'soak.mjs'), 'check', file],
      { encoding: 'utf8' },
    );
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const app = (k: number, v: number) => ({ ops: [['append', k, v]] });

test('check exits 0 on a clean history, with every class at 0 on its last line', () => {
  const r = check(
    new CraftedHistory().op(0, 'list', 0, 10, 'ok', app(1, 1)).probe({ lists: [listRow(1, [1])] }),
  );
  assert.equal(r.status, 0, r.out);
  const last = r.out.trim().split('\n').pop()!;
  assert.match(
    last,
    /^anomalies 0: history-malformed=0 .*list-lost=0 .*prepared-left=0; fractured reads \(not failures\): bank=0 lists=0$/,
  );
});

test('check exits 1 and names the anomaly', () => {
  const r = check(
    new CraftedHistory().op(0, 'list', 0, 10, 'ok', app(1, 1)).probe({ lists: [listRow(1, [])] }),
  );
  assert.equal(r.status, 1, r.out);
  assert.match(
    r.out,
    /list-lost: 1\n {2}key 1: value 1 \(ok append by process 0\) is missing from the final list/,
  );
});
