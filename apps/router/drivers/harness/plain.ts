// The plain side of the matrix: one stock Postgres (libs/testkit) with the same application role
// and one database per program, which each program fills with its own schema.
import { startPostgres, type PgServer } from '@tessera/testkit';

export interface PlainPostgres {
  server: PgServer;
  url(database: string): string;
  createDatabase(name: string): Promise<void>;
}

export async function startPlain(role: string, password: string): Promise<PlainPostgres> {
  // Autovacuum off so that sizes and plans of the reference answers do not depend on timing.
  const server = await startPostgres({ name: 'drivers', settings: { autovacuum: 'off' } });
  await server.query(`create role ${role} login password '${password.replace(/'/g, "''")}'`);
  return {
    server,
    url(database) {
      const u = new URL(server.url(database, role));
      u.password = password;
      return u.href;
    },
    async createDatabase(name) {
      await server.query(`drop database if exists ${name}`);
      await server.query(`create database ${name} owner ${role}`);
    },
  };
}
