// The sample multi-tenant schema `tessera up` loads into database `app`: what each table is, its
// DDL, how the catalog should declare it, and a little data. Pure data; bootstrap.ts applies it.
import { createHash } from 'node:crypto';

export const APP_ROLE = 'app';
export const APP_PASSWORD = 'app';
export const APP_DATABASE = 'app';

export interface SampleKeyspace {
  name: string;
  type: 'bigint' | 'uuid';
  ranges: number;
}

export type SampleTable =
  | { kind: 'sharded'; name: string; keyspace: string; keyColumn: string; ddl: string }
  | { kind: 'reference'; name: string; ddl: string }
  | { kind: 'global'; name: string; ddl: string };

export const SAMPLE_KEYSPACES: readonly SampleKeyspace[] = [
  { name: 'tenants', type: 'bigint', ranges: 4 },
  { name: 'events', type: 'uuid', ranges: 4 },
];

/** In creation order. All live in schema public. */
export const SAMPLE_TABLES: readonly SampleTable[] = [
  {
    kind: 'reference',
    name: 'plans',
    ddl: `create table if not exists plans (
      id int primary key,
      name text not null unique,
      monthly_price_cents int not null
    )`,
  },
  {
    kind: 'global',
    name: 'audit_log',
    ddl: `create table if not exists audit_log (
      id bigint generated always as identity primary key,
      at timestamptz not null default now(),
      tenant_id bigint,
      action text not null
    )`,
  },
  {
    kind: 'sharded',
    name: 'tenants',
    keyspace: 'tenants',
    keyColumn: 'id',
    ddl: `create table if not exists tenants (
      id bigint primary key,
      name text not null,
      plan_id int not null,
      created_at timestamptz not null default now()
    )`,
  },
  {
    kind: 'sharded',
    name: 'orders',
    keyspace: 'tenants',
    keyColumn: 'tenant_id',
    ddl: `create table if not exists orders (
      tenant_id bigint not null,
      id bigint not null,
      amount_cents bigint not null,
      status text not null default 'new',
      created_at timestamptz not null default now(),
      primary key (tenant_id, id)
    )`,
  },
  {
    kind: 'sharded',
    name: 'events',
    keyspace: 'events',
    keyColumn: 'id',
    ddl: `create table if not exists events (
      id uuid primary key,
      tenant_id bigint not null,
      kind text not null,
      payload jsonb not null default '{}',
      at timestamptz not null default now()
    )`,
  },
];

export const SAMPLE_PLANS = [
  { id: 1, name: 'free', monthlyPriceCents: 0 },
  { id: 2, name: 'team', monthlyPriceCents: 4_900 },
  { id: 3, name: 'enterprise', monthlyPriceCents: 49_900 },
] as const;

export interface SampleTenant {
  id: bigint;
  name: string;
  planId: number;
  orders: { id: bigint; amountCents: bigint; status: string }[];
}

const TENANT_NAMES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark Industries'];
const STATUSES = ['new', 'paid', 'shipped'];

export const SAMPLE_TENANTS: readonly SampleTenant[] = TENANT_NAMES.map((name, i) => ({
  id: BigInt(i + 1),
  name,
  planId: (i % 3) + 1,
  orders: [1, 2, 3].map((n) => ({
    id: BigInt(n),
    amountCents: BigInt(1_000 * (i + 1) + 250 * n),
    status: STATUSES[(i + n) % STATUSES.length] ?? 'new',
  })),
}));

export interface SampleEvent {
  id: string;
  tenantId: bigint;
  kind: string;
  payload: Record<string, unknown>;
}

/** A fixed uuid per sample event, so loading the sample twice inserts nothing new. */
function stableUuid(seed: string): string {
  const h = createHash('md5').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const EVENT_KINDS = ['signup', 'login', 'order_placed', 'invoice_sent'];

export const SAMPLE_EVENTS: readonly SampleEvent[] = Array.from({ length: 12 }, (_, i) => ({
  id: stableUuid(`tessera-sample-event-${i}`),
  tenantId: BigInt((i % TENANT_NAMES.length) + 1),
  kind: EVENT_KINDS[i % EVENT_KINDS.length] ?? 'login',
  payload: { n: i },
}));
