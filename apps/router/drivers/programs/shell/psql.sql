-- The psql program: what a person at psql or a deploy script does with the schema every program
-- uses, literal SQL on the simple protocol. `\echo @op NAME` starts each operation's output.
\pset footer off
\echo @op connect
select current_user, current_database();

\echo @op schema
create table currencies (code text primary key, name text not null, rate numeric(10,4) not null);
create table accounts (id bigint primary key, owner text not null,
  currency text not null references currencies (code), balance numeric(12,2) not null,
  status text not null default 'open', opened date not null);
create table entries (account_id bigint not null references accounts (id), id bigint not null,
  amount numeric(12,2) not null, note text, primary key (account_id, id));
create table audit (id bigint primary key, account_id bigint, action text not null);
-- A serial column that is not the shard key, and a primary key that does not hold it.
create table notes (account_id bigint not null, id bigserial, body text, primary key (account_id, id));
create table tags (id bigint primary key, account_id bigint not null, tag text not null);

\echo @op seed
insert into currencies (code, name, rate) values ('EUR', 'Euro', 1.0000), ('USD', 'US dollar', 1.0800),
  ('GBP', 'Pound sterling', 0.8600);
insert into accounts (id, owner, currency, balance, opened) values
  (1, 'owner-1', 'USD', 100.00, '2024-01-01'), (2, 'owner-2', 'GBP', 200.00, '2024-01-02'),
  (3, 'owner-3', 'EUR', 300.00, '2024-01-03'), (4, 'owner-4', 'USD', 400.00, '2024-01-04'),
  (5, 'owner-5', 'GBP', 500.00, '2024-01-05'), (6, 'owner-6', 'EUR', 600.00, '2024-01-06'),
  (7, 'owner-7', 'USD', 700.00, '2024-01-07'), (8, 'owner-8', 'GBP', 800.00, '2024-01-08'),
  (9, 'owner-9', 'EUR', 900.00, '2024-01-09'), (10, 'owner-10', 'USD', 1000.00, '2024-01-10'),
  (11, 'owner-11', 'GBP', 1100.00, '2024-01-11'), (12, 'owner-12', 'EUR', 1200.00, '2024-01-12'),
  (13, 'owner-13', 'USD', 1300.00, '2024-01-13'), (14, 'owner-14', 'GBP', 1400.00, '2024-01-14'),
  (15, 'owner-15', 'EUR', 1500.00, '2024-01-15'), (16, 'owner-16', 'USD', 1600.00, '2024-01-16'),
  (17, 'owner-17', 'GBP', 1700.00, '2024-01-17'), (18, 'owner-18', 'EUR', 1800.00, '2024-01-18'),
  (19, 'owner-19', 'USD', 1900.00, '2024-01-19'), (20, 'owner-20', 'GBP', 2000.00, '2024-01-20');
\copy entries (account_id, id, amount, note) from stdin
1	1	11.00	e1
1	2	12.00	e2
1	3	13.00	e3
2	1	21.00	e1
2	2	22.00	e2
2	3	23.00	e3
3	1	31.00	e1
3	2	32.00	e2
3	3	33.00	e3
4	1	41.00	e1
4	2	42.00	e2
4	3	43.00	e3
5	1	51.00	e1
5	2	52.00	e2
5	3	53.00	e3
6	1	61.00	e1
6	2	62.00	e2
6	3	63.00	e3
7	1	71.00	e1
7	2	72.00	e2
7	3	73.00	e3
8	1	81.00	e1
8	2	82.00	e2
8	3	83.00	e3
9	1	91.00	e1
9	2	92.00	e2
9	3	93.00	e3
10	1	101.00	e1
10	2	102.00	e2
10	3	103.00	e3
11	1	111.00	e1
11	2	112.00	e2
11	3	113.00	e3
12	1	121.00	e1
12	2	122.00	e2
12	3	123.00	e3
13	1	131.00	e1
13	2	132.00	e2
13	3	133.00	e3
14	1	141.00	e1
14	2	142.00	e2
14	3	143.00	e3
15	1	151.00	e1
15	2	152.00	e2
15	3	153.00	e3
16	1	161.00	e1
16	2	162.00	e2
16	3	163.00	e3
17	1	171.00	e1
17	2	172.00	e2
17	3	173.00	e3
18	1	181.00	e1
18	2	182.00	e2
18	3	183.00	e3
19	1	191.00	e1
19	2	192.00	e2
19	3	193.00	e3
20	1	201.00	e1
20	2	202.00	e2
20	3	203.00	e3
\.
insert into audit (id, account_id, action) values (1, 1, 'opened');

\echo @op read.key
select id, owner, currency, balance, status, opened from accounts where id = 7;
\echo @op read.key.join
select a.id, a.owner, c.name, e.id, e.amount from accounts a
  join entries e on e.account_id = a.id join currencies c on c.code = a.currency
 where a.id = 7 order by e.id;
\echo @op read.in
select id, balance from accounts where id in (1, 2, 3) order by id;
\echo @op read.any
select id, balance from accounts where id = any(array[4, 5, 6]) order by id;
\echo @op read.scatter.order
select id, owner, balance from accounts order by balance desc, id limit 5;
\echo @op read.scatter.agg
select currency, count(*), sum(balance), min(balance), max(opened) from accounts
 group by currency order by currency;
\echo @op read.scatter.aggexpr
select count(*)::int, coalesce(sum(balance), 0), round(avg(balance), 2) from accounts;
\echo @op read.scatter.join
select a.currency, count(*), sum(e.amount) from accounts a
  join entries e on e.account_id = a.id group by a.currency order by a.currency;
\echo @op read.scatter.ref
select c.name, count(*) from accounts a join currencies c on c.code = a.currency
 group by c.name order by c.name;
\echo @op read.subquery
select count(*) from (select distinct currency from accounts) s;
\echo @op read.cte.key
with e as (select * from entries where account_id = 7) select count(*), sum(amount) from e;
\echo @op read.now
select count(*) from accounts where opened < current_date;
\echo @op read.union
select id from accounts where id <= 2 union all select id from accounts where id between 19 and 20 order by 1;
\echo @op read.ref
select code, name, rate from currencies order by code;
\echo @op read.global
select id, account_id, action from audit order by id;
\echo @op txn.read.key
begin;
select balance from accounts where id = 8;
commit;
\echo @op txn.read.scatter
begin;
select count(*), sum(balance) from accounts;
commit;
\echo @op txn.repeatable_read
begin isolation level repeatable read;
select balance from accounts where id = 8;
select count(*) from accounts;
commit;

\echo @op describe.table
\d accounts
\echo @op describe.list
\dt+
\echo @op size.table
select pg_relation_size('accounts') as heap_bytes, pg_total_relation_size('accounts') as total_bytes,
       pg_total_relation_size('currencies') as reference_total_bytes;
\echo @op size.database
select pg_database_size(current_database()) > pg_total_relation_size('accounts') as larger_than_accounts;
\echo @op view.create
create view account_totals as
  select currency, count(*) as n, sum(balance) as total from accounts group by currency;
select * from account_totals order by currency;

\echo @op prepared.sql
prepare balance_by_id (bigint) as select balance from accounts where id = $1;
execute balance_by_id (3);
execute balance_by_id (4);
deallocate balance_by_id;
\echo @op cursor.declare
begin;
declare c cursor for select id from accounts order by id;
fetch 5 from c;
fetch 5 from c;
close c;
commit;
\echo @op copy.out
\copy (select id, owner, balance from accounts order by id) to stdout
\echo @op copy.out.table
\copy currencies to stdout
\echo @op copy.out.sharded
copy (select account_id, id, amount from entries where account_id = 7 order by id) to stdout;
\echo @op session.set
set statement_timeout = '5s';
show statement_timeout;
reset statement_timeout;
\echo @op session.temp
create temp table scratch (n int);
insert into scratch values (1), (2);
select sum(n) from scratch;
drop table scratch;
\echo @op session.listen
listen accounts_changed;
notify accounts_changed, 'hello';
unlisten accounts_changed;
\echo @op cancel.timeout
set statement_timeout = '500ms';
select pg_sleep(3);
reset statement_timeout;

\echo @op insert.select
insert into accounts (id, owner, currency, balance, opened)
  select 100 + g, 'gen-' || g, 'EUR', 50.00, '2024-02-01' from generate_series(1, 4) g;
\echo @op insert.nocolumns
insert into accounts values (201, 'nocol-201', 'USD', 75.00, 'open', '2024-02-02');
\echo @op insert.returning
insert into accounts (id, owner, currency, balance, opened)
  values (301, 'returning', 'GBP', 10.00, '2024-02-03') returning id, owner, balance, status;
\echo @op insert.multirow.returning
insert into accounts (id, owner, currency, balance, opened)
  values (302, 'r-302', 'GBP', 10.00, '2024-02-03'), (303, 'r-303', 'GBP', 10.00, '2024-02-03')
  returning id;
\echo @op insert.ref
insert into currencies values ('CHF', 'Swiss franc', 0.9500);
\echo @op insert.global
insert into audit values (2, 2, 'closed');
\echo @op insert.serial
insert into notes (account_id, body) values (1, 'first') returning id;
insert into notes (account_id, body) values (2, 'second') returning id;
\echo @op unique.nonkey
insert into tags (id, account_id, tag) values (1, 1, 'gold');
insert into tags (id, account_id, tag) values (1, 2, 'silver');
select count(*) from tags;
\echo @op update.key
update accounts set balance = balance + 5 where id = 9;
\echo @op update.scatter
update accounts set status = 'large' where balance >= 1500 and id <= 20;
\echo @op update.ref
update currencies set rate = 1.0900 where code = 'USD';
\echo @op delete.key
delete from entries where account_id = 10 and id = 3;
\echo @op delete.scatter
delete from entries where note = 'e3' and amount > 180;
\echo @op txn.two_node
begin;
update accounts set balance = balance - 50 where id = 1;
update accounts set balance = balance + 50 where id = 2;
insert into entries (account_id, id, amount, note) values (1, 10, -50.00, 'transfer');
insert into entries (account_id, id, amount, note) values (2, 10, 50.00, 'transfer');
commit;
select id, balance from accounts where id in (1, 2) order by id;
\echo @op txn.multirow
begin;
insert into entries (account_id, id, amount, note) values (1, 11, 1.00, 'm'), (2, 11, 1.00, 'm');
commit;
\echo @op txn.rollback
begin;
update accounts set balance = 0 where id = 3;
insert into accounts (id, owner, currency, balance, opened) values (4, 'dup', 'EUR', 1, '2024-01-01');
rollback;
select balance from accounts where id = 3;
\echo @op txn.savepoint
begin;
update accounts set balance = balance + 1 where id = 5;
savepoint s1;
insert into accounts (id, owner, currency, balance, opened) values (6, 'dup', 'EUR', 1, '2024-01-01');
rollback to savepoint s1;
update accounts set balance = balance + 1 where id = 6;
commit;
select id, balance from accounts where id in (5, 6) order by id;
\echo @op lock.reference
begin;
lock table currencies in share mode;
commit;

\echo @op final.accounts
select id, owner, currency, balance, status, opened from accounts order by id;
\echo @op final.entries
select account_id, id, amount, note from entries order by account_id, id;
\echo @op final.currencies
select code, name, rate from currencies order by code;
\echo @op final.audit
select id, account_id, action from audit order by id;
