select *, score * 2 as double from t order by double, updated_at
