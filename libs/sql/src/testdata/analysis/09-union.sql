select id from a where k = 1 union all select id from b where k = 1 order by id limit 5
