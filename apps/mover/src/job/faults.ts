// Kill points for the kill matrix (move.kill-matrix.test.ts): with TESSERA_MOVER_FAULT=<phase>
// the process SIGKILLs itself right after it durably recorded entering that phase, exactly where
// a crash hurts most; a few name a point inside a phase instead (the copy's, move/copy.ts).
// Never set outside tests.
export function faultArmed(phase: string): boolean {
  const want = process.env['TESSERA_MOVER_FAULT'];
  return want !== undefined && want !== '' && want === phase;
}

export function faultPoint(phase: string): void {
  if (!faultArmed(phase)) return;
  process.stdout.write(
    `${JSON.stringify({ level: 'fatal', msg: `fault point ${phase}: killing myself` })}\n`,
  );
  process.kill(process.pid, 'SIGKILL');
}
