// The logger's lines and the metrics endpoint, against a real HTTP server on 127.0.0.1.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, createMetrics, grpcServerMetrics, startMetricsServer } from './index.js';

function collect(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

test('the logger writes JSON lines with service, level label and time, and redacts secrets', () => {
  const { lines, stream } = collect();
  const log = createLogger('coordinator', { level: 'debug', destination: stream });
  log.info(
    { password: 'hunter2', conn: { token: 't0k', host: 'h' }, authorization: 'Bearer x' },
    'started',
  );
  log.debug('details');
  log.trace('not shown');
  assert.equal(lines.length, 2);
  const first = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
  assert.equal(first['service'], 'coordinator');
  assert.equal(first['level'], 'info');
  assert.equal(first['msg'], 'started');
  assert.equal(first['password'], '[redacted]');
  assert.equal(first['authorization'], '[redacted]');
  assert.deepEqual(first['conn'], { token: '[redacted]', host: 'h' });
  assert.match(String(first['time']), /^\d{4}-\d\d-\d\dT/);
  assert.equal((JSON.parse(lines[1] ?? '') as Record<string, unknown>)['level'], 'debug');
});

test('the log level comes from TESSERA_LOG_LEVEL when not given, and a bad one is refused', () => {
  const saved = process.env['TESSERA_LOG_LEVEL'];
  try {
    process.env['TESSERA_LOG_LEVEL'] = 'warn';
    const { lines, stream } = collect();
    const log = createLogger('router', { destination: stream });
    log.info('hidden');
    log.warn('shown');
    assert.equal(lines.length, 1);
    assert.throws(
      () => createLogger('router', { level: 'loud' }),
      /log level "loud" is not one of/,
    );
  } finally {
    if (saved === undefined) delete process.env['TESSERA_LOG_LEVEL'];
    else process.env['TESSERA_LOG_LEVEL'] = saved;
  }
});

test('the metrics endpoint serves Prometheus text with gRPC call metrics, /healthz, and 404 otherwise', async () => {
  const { registry } = createMetrics('mover');
  const grpc = grpcServerMetrics(registry);
  grpc.observe('tessera.v1.JobService', 'ClaimJob', 'OK', 0.004);
  grpc.observe('tessera.v1.JobService', 'ClaimJob', 'OK', 0.02);
  grpcServerMetrics(registry).observe('tessera.v1.JobService', 'GetJob', 'NOT_FOUND', 0.001);
  const server = await startMetricsServer(registry, { port: 0 });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.match(
      text,
      /tessera_grpc_server_calls_total\{service="tessera.v1.JobService",method="ClaimJob",code="OK"\} 2/,
    );
    assert.match(
      text,
      /tessera_grpc_server_calls_total\{service="tessera.v1.JobService",method="GetJob",code="NOT_FOUND"\} 1/,
    );
    assert.match(
      text,
      /tessera_grpc_server_call_duration_seconds_count\{service="tessera.v1.JobService",method="ClaimJob"\} 2/,
    );
    assert.match(text, /tessera_process_cpu_user_seconds_total\{service="mover"\}/);
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok');
    assert.equal((await fetch(`${base}/nope`)).status, 404);
  } finally {
    await server.close();
  }
});
