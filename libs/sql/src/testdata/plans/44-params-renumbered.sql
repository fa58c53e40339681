select id from t where score > $2 order by id limit $1
