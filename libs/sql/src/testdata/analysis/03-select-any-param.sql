select * from events where tenant_id = any($1::bigint[]) and kind = $2
