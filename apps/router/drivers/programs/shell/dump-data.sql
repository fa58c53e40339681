-- What the pg_dump program dumps and restores: the tables every program uses (sharded, colocated,
-- reference, global), a view over the sharded table, a sequence with a value, an index.
create table currencies (code text primary key, name text not null, rate numeric(10,4) not null);
create table accounts (id bigint primary key, owner text not null,
  currency text not null references currencies (code), balance numeric(12,2) not null,
  status text not null default 'open', opened date not null);
create table entries (account_id bigint not null references accounts (id), id bigint not null,
  amount numeric(12,2) not null, note text, primary key (account_id, id));
create index entries_note on entries (note);
create table audit (id bigint primary key, account_id bigint, action text not null);
create sequence invoice_numbers start 1000;
insert into currencies (code, name, rate) values ('EUR', 'Euro', 1.0000), ('USD', 'US dollar', 1.0800),
  ('GBP', 'Pound sterling', 0.8600);
insert into accounts (id, owner, currency, balance, opened)
  values (1, 'owner-1', 'USD', 100.00, '2024-01-01'), (2, 'owner-2', 'GBP', 200.00, '2024-01-02'),
         (3, 'owner-3', 'EUR', 300.00, '2024-01-03'), (4, 'owner-4', 'USD', 400.00, '2024-01-04'),
         (5, 'owner-5', 'GBP', 500.00, '2024-01-05'), (6, 'owner-6', 'EUR', 600.00, '2024-01-06'),
         (7, 'owner-7', 'USD', 700.00, '2024-01-07'), (8, 'owner-8', 'GBP', 800.00, '2024-01-08');
insert into entries (account_id, id, amount, note)
  values (1, 1, 11.00, 'e1'), (1, 2, 12.00, 'e2'), (2, 1, 21.00, 'e1'), (3, 1, 31.00, 'e1'),
         (4, 1, 41.00, 'e1'), (5, 1, 51.00, 'e1'), (6, 1, 61.00, 'e1'), (7, 1, 71.00, 'e1'),
         (8, 1, 81.00, 'e1'), (8, 2, 82.00, 'e2');
insert into audit (id, account_id, action) values (1, 1, 'opened'), (2, 2, 'opened');
select nextval('invoice_numbers');
select nextval('invoice_numbers');
create view account_totals as
  select currency, count(*) as n, sum(balance) as total from accounts group by currency;
