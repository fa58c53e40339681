// A Node test reporter that writes {"passed":N,"failed":N,"skipped":N,"failures":[...]} for the
// root summary: a line with the counts so far after every test, so a runner killed midway (a file
// past its deadline) still leaves the counts it reached. Each failure names its file, its test
// and the first lines of its error, so the summary at the very end of `npm test` says what failed
// (the spec reporter's own list scrolls away among the other projects' lines).
const ERROR_CHARS = 600;

function describe(error) {
  const cause = error?.cause ?? error;
  const text = String(cause?.stack ?? cause?.message ?? cause ?? 'failed');
  return text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS)}…` : text;
}

export default async function* countReporter(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  for await (const event of source) {
    if (event.data?.details?.type === 'suite') continue;
    if (event.type === 'test:pass') {
      if (event.data.skip || event.data.todo) counts.skipped++;
      else counts.passed++;
    } else if (event.type === 'test:fail') {
      counts.failed++;
      counts.failures.push({
        file: event.data.file ?? '',
        test: event.data.name,
        error: describe(event.data.details?.error),
      });
    } else continue;
    yield JSON.stringify(counts) + '\n';
  }
}
