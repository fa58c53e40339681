delete from order_items i using orders o where i.order_id = o.id and i.tenant_id = o.tenant_id and o.tenant_id = 3
