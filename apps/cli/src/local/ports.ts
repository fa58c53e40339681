// Choosing the local cluster's ports once: the well-known defaults when they are free, so the
// printed addresses are the familiar ones, and otherwise whatever the kernel has free.
import { createServer } from 'node:net';
import { freePort } from '@tessera/pgctl';

/** Whether 127.0.0.1:port can be bound right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** `preferred` if free and not already taken by another choice, else a free port. */
export async function choosePort(preferred: number, taken: Set<number>): Promise<number> {
  let port = !taken.has(preferred) && (await isPortFree(preferred)) ? preferred : await freePort();
  while (taken.has(port)) port = await freePort();
  taken.add(port);
  return port;
}
