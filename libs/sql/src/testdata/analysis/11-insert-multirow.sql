insert into orders (tenant_id, id, note) values ($1, $2, 'a, (b)'), ($3, $4, default), (7, -8, now()::text) on conflict (tenant_id, id) do update set note = excluded.note returning id
