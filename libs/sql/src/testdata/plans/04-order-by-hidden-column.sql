select name from t order by created_at desc nulls last, id
