select s.name, g.code from (select id, name from t) s join r g on g.code = s.name
