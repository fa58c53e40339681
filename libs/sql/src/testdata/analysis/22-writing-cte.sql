with moved as (delete from orders where tenant_id = 1 returning *) insert into archive select * from moved
