select * from orders join tenants using (tenant_id) left join countries c on c.code = tenants.country where orders.tenant_id = 42
