// The baseline: pgbench straight at Postgres, no process in between.
import type { Target } from './target.js';

export function directTarget(host: string, port: number, name = 'direct'): Target {
  return {
    name,
    host,
    port,
    pid: undefined,
    detail: `Postgres itself on ${host}:${port}`,
    async stop() {
      // Postgres belongs to the suite, which disposes of it.
    },
  };
}
