// A Node test reporter that writes {"passed":N,"failed":N,"skipped":N} for the root summary: a
// line with the counts so far after every test, so a runner killed midway (a file past its
// deadline) still leaves the counts it reached.
export default async function* countReporter(source) {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for await (const event of source) {
    if (event.data?.details?.type === 'suite') continue;
    if (event.type === 'test:pass') {
      if (event.data.skip || event.data.todo) counts.skipped++;
      else counts.passed++;
    } else if (event.type === 'test:fail') counts.failed++;
    else continue;
    yield JSON.stringify(counts) + '\n';
  }
}
