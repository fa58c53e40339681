insert into archive (tenant_id, id) select tenant_id, id from orders where tenant_id = 5 and created_at < '2020-01-01'
