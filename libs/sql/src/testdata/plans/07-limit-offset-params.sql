select id from t where id = any($1) order by id limit $2 offset $3
