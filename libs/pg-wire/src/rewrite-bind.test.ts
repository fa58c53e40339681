import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrameReader, Writer, decodeBind, rewriteBindStatement, writeBind } from './index.js';

const body = (w: Writer): Buffer => {
  const r = new FrameReader();
  r.push(w.flush());
  return r.next()!.body;
};

test('a Bind rewritten to the router name keeps everything else', () => {
  for (const portal of ['', 'p1', 'ü'.repeat(40)]) {
    for (const params of [[], ['1'], ['x'.repeat(300), null, 'y']]) {
      const original = body(
        writeBind(new Writer(), { portal, statement: 'client_name', params, resultFormats: [1] }),
      );
      const rewritten = rewriteBindStatement(original, 'tessera_0123456789abcdef01234567');
      assert.equal(rewritten[0], 0x42);
      assert.equal(rewritten.readInt32BE(1), rewritten.length - 1);
      const d = decodeBind(rewritten.subarray(5));
      const o = decodeBind(original);
      assert.equal(d.statement, 'tessera_0123456789abcdef01234567');
      assert.equal(d.portal, portal);
      assert.deepEqual(d.params, o.params);
      assert.deepEqual(d.resultFormats, [1]);
    }
  }
});
