select o.id, i.sku from orders o join order_items i on i.tenant_id = o.tenant_id and i.order_id = o.id where o.tenant_id = $1
