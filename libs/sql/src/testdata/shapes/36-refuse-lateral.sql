select * from t, lateral (select * from u where u.id = t.id) x
