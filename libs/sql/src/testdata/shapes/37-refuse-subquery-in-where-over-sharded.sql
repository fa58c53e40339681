select id from (select id from t) s where id in (select id from u)
