update orders set status = 'paid', paid_at = now() where tenant_id = $1 and id = $2 returning *
