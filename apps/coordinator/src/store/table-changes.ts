// Catalog changes to table declarations: sharded (DistributeTable), reference, and dropping a
// declaration (the table becomes global again; its data is not touched).
import type {
  DistributeTableRequest,
  DropTableRequest,
  ReferenceTableRequest,
} from '@tessera/proto';
import { alreadyExists, notFound } from '../errors.js';
import type { ChangeTx } from './catalog-store.js';
import { checkName, checkSchemaName } from './names.js';

async function checkUndeclared({ client }: ChangeTx, schema: string, name: string): Promise<void> {
  const { rows } = await client.query<{ kind: string }>(
    'select kind from tessera.dist_table where schema_name = $1 and name = $2',
    [schema, name],
  );
  const kind = rows[0]?.kind;
  if (kind !== undefined)
    throw alreadyExists(`table ${schema}.${name} is already declared (${kind})`);
}

export async function distributeTable(tx: ChangeTx, req: DistributeTableRequest): Promise<void> {
  const schema = checkSchemaName(req.schema);
  const name = checkName('table name', req.name);
  const keyColumn = checkName('key column', req.keyColumn);
  const keyspace = checkName('keyspace name', req.keyspace);
  const ks = await tx.client.query('select 1 from tessera.keyspace where name = $1', [keyspace]);
  if (ks.rowCount === 0) throw notFound(`no keyspace named ${keyspace}`);
  await checkUndeclared(tx, schema, name);
  await tx.client.query(
    `insert into tessera.dist_table (schema_name, name, kind, keyspace, key_column) values ($1, $2, 'sharded', $3, $4)`,
    [schema, name, keyspace, keyColumn],
  );
}

export async function referenceTable(tx: ChangeTx, req: ReferenceTableRequest): Promise<void> {
  const schema = checkSchemaName(req.schema);
  const name = checkName('table name', req.name);
  await checkUndeclared(tx, schema, name);
  await tx.client.query(
    `insert into tessera.dist_table (schema_name, name, kind) values ($1, $2, 'reference')`,
    [schema, name],
  );
}

export async function dropTable(tx: ChangeTx, req: DropTableRequest): Promise<void> {
  const schema = checkSchemaName(req.schema);
  const name = checkName('table name', req.name);
  const res = await tx.client.query(
    'delete from tessera.dist_table where schema_name = $1 and name = $2',
    [schema, name],
  );
  if (res.rowCount === 0) throw notFound(`table ${schema}.${name} is not declared`);
}
