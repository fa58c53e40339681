copy orders (tenant_id, id, note) from stdin with (format csv, header true, delimiter '|', null 'NULL')
