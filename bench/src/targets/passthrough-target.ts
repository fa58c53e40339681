// Starts the pass-through proxy (passthrough.ts) as its own plain node process in front of one
// Postgres. The file is transpiled to JavaScript first (it uses node built-ins only), so the floor
// never carries a TypeScript loader's memory or start-up cost, built or not.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../harness/entry.js';
import { startProcess, tempDir, waitFor } from '../harness/processes.js';
import { answersQueries, skipped, type TargetStart } from './target.js';

const SOURCE = join(REPO_ROOT, 'bench', 'src', 'targets', 'passthrough.ts');

export async function startPassthrough(
  upstreamHost: string,
  upstreamPort: number,
): Promise<TargetStart> {
  const tmp = tempDir('passthrough');
  const file = join(tmp.path, 'passthrough.mjs');
  const js = ts.transpileModule(readFileSync(SOURCE, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  writeFileSync(file, js);
  const proc = startProcess(process.execPath, [
    file,
    '--listen-port',
    '0',
    '--upstream',
    `${upstreamHost}:${upstreamPort}`,
  ]);
  const stop = async () => {
    await proc.stop();
    tmp.dispose();
  };
  let port = 0;
  await waitFor(
    async () => {
      const m = /\{"port":(\d+)\}/.exec(proc.output());
      if (m) port = Number(m[1]);
      return port > 0 || proc.child.exitCode !== null;
    },
    30_000,
    50,
  );
  if (
    port === 0 ||
    !(await answersQueries('127.0.0.1', port, 10_000, () => proc.child.exitCode === null))
  ) {
    const out = proc.output().trim().slice(-300);
    await stop();
    return skipped('passthrough', `the proxy did not start: ${out || 'no output'}`);
  }
  return {
    ok: true,
    target: {
      name: 'passthrough',
      host: '127.0.0.1',
      port,
      pid: proc.pid,
      detail: 'bare Node pipe (bench/src/targets/passthrough.ts, transpiled, plain node)',
      stop,
    },
  };
}
