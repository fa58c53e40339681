alter table orders add column x int; create index concurrently orders_x on orders (x); drop table if exists old_orders, app.tmp cascade; truncate orders
