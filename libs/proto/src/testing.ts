// Test helper: a real grpc-js server on 127.0.0.1 with a free port. Not exported from index.ts.
import * as grpc from '@grpc/grpc-js';

export interface TestServer {
  server: grpc.Server;
  address: string;
  stop(): Promise<void>;
}

export async function startServer(register: (server: grpc.Server) => void): Promise<TestServer> {
  const server = new grpc.Server();
  register(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    server,
    address: `127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}
