// DDL: command, objects, and CREATE TABLE's columns and constraints.
import { test } from 'node:test';
import { initSqlParser, analyze } from './index.js';
import { assertSubset } from './subset.testutil.js';

await initSqlParser();

const cases: Array<[string, Record<string, unknown>]> = [
  [
    "create table if not exists s.orders (id bigint primary key, tenant_id int not null, note varchar(20) default 'x', tags text[], " +
      'amount numeric(10,2), at timestamptz, constraint fk foreign key (tenant_id) references tenants (id), unique (tenant_id, id), check (id > 0))',
    {
      kind: 'ddl',
      command: 'create_table',
      ifNotExists: true,
      objects: [{ type: 'table', schema: 's', name: 'orders' }],
      tables: [
        { schema: 's', name: 'orders', role: 'target' },
        { name: 'tenants', role: 'read' },
      ],
      createTable: {
        schema: 's',
        name: 'orders',
        ifNotExists: true,
        hasConstraints: true,
        temporary: false,
        columns: [
          { name: 'id', type: 'int8', notNull: true },
          { name: 'tenant_id', type: 'int4', notNull: true },
          { name: 'note', type: 'varchar(20)', hasDefault: true, notNull: false },
          { name: 'tags', type: 'text[]' },
          { name: 'amount', type: 'numeric(10,2)' },
          { name: 'at', type: 'timestamptz' },
        ],
        constraints: [
          { type: 'primary_key', columns: ['id'] },
          {
            type: 'foreign_key',
            name: 'fk',
            columns: ['tenant_id'],
            references: { name: 'tenants', columns: ['id'] },
          },
          { type: 'unique', columns: ['tenant_id', 'id'] },
          { type: 'check', columns: [] },
        ],
      },
    },
  ],
  [
    'create table t (id serial, x int generated always as identity)',
    {
      createTable: {
        hasConstraints: false,
        columns: [
          { name: 'id', type: 'serial', hasDefault: true },
          { name: 'x', isIdentity: true },
        ],
      },
    },
  ],
  ['create temp table t (a int)', { createTable: { temporary: true } }],
  [
    'create table p (id bigint, primary key (id)) partition by hash (id)',
    {
      createTable: { isPartitioned: true, constraints: [{ type: 'primary_key', columns: ['id'] }] },
    },
  ],
  [
    'create table p1 partition of p for values with (modulus 2, remainder 0)',
    {
      createTable: { partitionOf: { name: 'p' } },
      tables: [
        { name: 'p1', role: 'target' },
        { name: 'p', role: 'read' },
      ],
    },
  ],
  ['create table c (like t including all)', { createTable: { hasLike: true } }],
  [
    'create table "CamelCase" ("Id" int)',
    { objects: [{ name: 'CamelCase' }], createTable: { columns: [{ name: 'Id' }] } },
  ],
  [
    'create table t2 as select * from t where id = 1',
    {
      command: 'create_table_as',
      tables: [
        { name: 't', role: 'read', scope: 'nested' },
        { name: 't2', role: 'target', scope: 'top' },
      ],
      query: { kind: 'select', sql: 'select * from t where id = 1' },
    },
  ],
  [
    'select * into t2 from t',
    {
      kind: 'ddl',
      command: 'create_table_as',
      objects: [{ name: 't2' }],
      query: { kind: 'select' },
    },
  ],
  [
    'create materialized view mv as select count(*) from t',
    { command: 'create_materialized_view' },
  ],
  [
    'refresh materialized view mv',
    { command: 'refresh_materialized_view', tables: [{ name: 'mv', role: 'target' }] },
  ],
  [
    'create view v as select * from t',
    {
      command: 'create_view',
      objects: [{ name: 'v' }],
      query: { kind: 'select', sql: 'select * from t' },
    },
  ],
  [
    'alter table t add column x int',
    {
      command: 'alter_table',
      objects: [{ type: 'table', name: 't' }],
      tables: [{ name: 't', role: 'target' }],
    },
  ],
  ['alter table if exists t drop column x', { command: 'alter_table', ifExists: true }],
  [
    'alter table t add constraint fk foreign key (a) references u (id)',
    {
      tables: [
        { name: 't', role: 'target' },
        { name: 'u', role: 'read' },
      ],
    },
  ],
  [
    'drop table if exists a, s.b cascade',
    {
      command: 'drop_table',
      ifExists: true,
      cascade: true,
      objects: [
        { type: 'table', name: 'a' },
        { type: 'table', schema: 's', name: 'b' },
      ],
      tables: [
        { name: 'a', role: 'target' },
        { schema: 's', name: 'b', role: 'target' },
      ],
    },
  ],
  [
    'drop index concurrently i',
    { command: 'drop_index', objects: [{ type: 'index', name: 'i' }], tables: [] },
  ],
  ['drop view v', { command: 'drop_view', tables: [{ name: 'v' }] }],
  ['drop schema s cascade', { command: 'drop_schema', objects: [{ type: 'schema', name: 's' }] }],
  ['drop type mood', { command: 'drop_type', objects: [{ name: 'mood' }] }],
  ['drop function f(int)', { command: 'drop_function', objects: [{ name: 'f' }] }],
  [
    'truncate a, b restart identity',
    {
      command: 'truncate',
      tables: [
        { name: 'a', role: 'target' },
        { name: 'b', role: 'target' },
      ],
    },
  ],
  [
    'create index concurrently if not exists i on s.t (a, b)',
    {
      command: 'create_index',
      ifNotExists: true,
      objects: [
        { type: 'index', name: 'i', schema: 's' },
        { type: 'table', schema: 's', name: 't' },
      ],
      tables: [{ schema: 's', name: 't', role: 'target' }],
    },
  ],
  [
    'create unique index on t (a)',
    { command: 'create_index', objects: [{ type: 'table', name: 't' }] },
  ],
  [
    'create schema if not exists s',
    { command: 'create_schema', ifNotExists: true, objects: [{ type: 'schema', name: 's' }] },
  ],
  [
    "create type mood as enum ('a', 'b')",
    { command: 'create_type', objects: [{ type: 'type', name: 'mood' }], tables: [] },
  ],
  [
    'create type pair as (a int, b int)',
    { command: 'create_type', objects: [{ type: 'type', name: 'pair' }], tables: [] },
  ],
  ['create domain d as int check (value > 0)', { command: 'create_domain' }],
  [
    'create extension if not exists pgcrypto',
    { command: 'create_extension', objects: [{ type: 'extension', name: 'pgcrypto' }] },
  ],
  [
    'create sequence s start 1',
    { command: 'create_sequence', tables: [{ name: 's', role: 'target' }] },
  ],
  [
    "create function f() returns int language sql as 'select 1'",
    { command: 'create_function', objects: [{ type: 'function', name: 'f' }] },
  ],
  [
    'create trigger trg before insert on t for each row execute function f()',
    { command: 'create_trigger', tables: [{ name: 't', role: 'target' }] },
  ],
  [
    "comment on table t is 'x'",
    { command: 'comment', objects: [{ type: 'table', name: 't' }], tables: [{ name: 't' }] },
  ],
  [
    "comment on column s.t.c is 'x'",
    { command: 'comment', objects: [{ type: 'column', schema: 's', name: 't' }] },
  ],
  ['grant select on t to bob', { command: 'grant', tables: [{ name: 't', role: 'target' }] }],
  ['revoke all on schema s from bob', { command: 'revoke' }],
  ['grant admin to bob', { command: 'grant_role' }],
  ['alter table t rename to u', { command: 'rename', tables: [{ name: 't', role: 'target' }] }],
  [
    'alter table t rename column a to b',
    { command: 'rename', objects: [{ type: 'table', name: 't' }] },
  ],
  ['create role r login', { command: 'create_role' }],
  ['create database d', { command: 'create_database' }],
  ['create publication p for table t', { command: 'create_publication', tables: [{ name: 't' }] }],
  ['cluster t using i', { command: 'cluster', tables: [{ name: 't' }] }],
  ['reindex table t', { command: 'reindex', tables: [{ name: 't' }] }],
];

for (const [sql, expected] of cases) {
  test(`ddl: ${sql.slice(0, 80)}`, () => assertSubset(analyze(sql), expected));
}
