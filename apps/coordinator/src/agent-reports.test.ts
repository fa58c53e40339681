import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { create, AgentReportSchema, type AgentDirective } from '@tessera/proto';
import { AgentReports, type DirectiveSink } from './agent-reports.js';

class Sink implements DirectiveSink {
  readonly pushed: AgentDirective[] = [];
  closed = false;
  dismissedWith: Error | undefined;
  push(d: AgentDirective): void {
    if (!this.closed) this.pushed.push(d);
  }
  close(): void {
    this.closed = true;
  }
  dismiss(err: Error): void {
    this.dismissedWith = err;
    this.closed = true;
  }
}

test('handing the agents over dismisses their streams and rejects the directives still pending on them', async () => {
  const agents = new AgentReports(new Registry());
  const sink = new Sink();
  agents.record(create(AgentReportSchema, { node: 'home', address: 'r:1' }), sink);
  const promoting = agents.directive('home', 'r:1', { action: 'promote', reason: 't' }, 60_000);
  assert.equal(sink.pushed.length, 1);
  const err = new Error('report to the active coordinator at b:2');
  agents.dismissAll(err);
  assert.equal(sink.dismissedWith, err);
  await assert.rejects(promoting, /handed over to another coordinator: .*at b:2/);
  // Nothing goes out on a dismissed stream any more.
  assert.equal(agents.send('home', 'r:1', { action: 'lease' }), false);
  await assert.rejects(
    agents.directive('home', 'r:1', { action: 'fence', reason: 't' }, 60_000),
    /not connected to this coordinator/,
  );
});
