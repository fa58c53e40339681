with recent as (select * from orders where created_at > now() - interval '1 day') select r.*, (select name from tenants t where t.id = r.tenant_id) from recent r where r.tenant_id = $1
