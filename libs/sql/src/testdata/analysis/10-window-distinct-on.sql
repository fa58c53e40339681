select distinct on (tenant_id) tenant_id, id, rank() over (partition by tenant_id order by amount) from orders
