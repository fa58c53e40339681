// Many idle client sessions at once, each logged in (StartupMessage answered up to ReadyForQuery)
// and then left alone: the load a proxy sees from a large application connection pool. Raw
// sockets, not a driver, so the harness itself stays small with thousands of them open.
import { connect, type Socket } from 'node:net';

const PROTOCOL_3_0 = 196608;
const TERMINATE = Buffer.from([0x58, 0, 0, 0, 4]);

function startupMessage(user: string, database: string): Buffer {
  const params = Buffer.from(
    `user\0${user}\0database\0${database}\0application_name\0tessera-bench-idle\0\0`,
  );
  const b = Buffer.alloc(8 + params.length);
  b.writeInt32BE(b.length, 0);
  b.writeInt32BE(PROTOCOL_3_0, 4);
  params.copy(b, 8);
  return b;
}

/** Opens one session and resolves once the server says ReadyForQuery. */
function openSession(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true });
    let buf = Buffer.alloc(0);
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(why));
    };
    socket.setTimeout(timeoutMs, () => fail(`no ReadyForQuery within ${timeoutMs} ms`));
    socket.once('error', (e) => fail(e.message));
    socket.once('connect', () => socket.write(startupMessage('postgres', 'postgres')));
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 5) {
        const code = buf[0]!;
        const len = buf.readInt32BE(1);
        if (buf.length < 1 + len) return;
        const body = buf.subarray(5, 1 + len);
        buf = buf.subarray(1 + len);
        if (code === 0x52 /* R */ && body.readInt32BE(0) !== 0) {
          return fail('the server asks for a password; the idle suite uses trust authentication');
        }
        if (code === 0x45 /* E */)
          return fail(`ErrorResponse: ${body.toString('utf8').replace(/\0/g, ' ').trim()}`);
        if (code === 0x5a /* Z */) {
          socket.setTimeout(0);
          socket.off('data', onData);
          socket.removeAllListeners('error');
          socket.on('error', () => undefined); // a proxy closing idle sessions is its own finding
          return resolve(socket);
        }
      }
    };
    socket.on('data', onData);
  });
}

export interface IdleSessions {
  readonly count: number;
  close(): Promise<void>;
}

/** Opens `n` sessions, `concurrency` logins at a time; all or nothing. */
export async function openIdleSessions(
  host: string,
  port: number,
  n: number,
  concurrency = 50,
  timeoutMs = 30_000,
): Promise<IdleSessions> {
  const sockets: Socket[] = [];
  const close = async () => {
    await Promise.all(
      sockets.splice(0).map(
        (s) =>
          new Promise<void>((resolve) => {
            s.once('close', () => resolve());
            s.end(TERMINATE);
            setTimeout(() => {
              s.destroy();
              resolve();
            }, 2_000).unref();
          }),
      ),
    );
  };
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      sockets.push(await openSession(host, port, timeoutMs));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  } catch (e) {
    await close();
    throw e;
  }
  return { count: sockets.length, close };
}
