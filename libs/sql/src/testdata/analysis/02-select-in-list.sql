select * from orders o where o.tenant_id in (1, 2, 3) and o.status = 'open' order by o.created_at desc limit 20
