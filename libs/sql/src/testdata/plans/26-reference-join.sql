select t.id, r.label from t join r on r.code = t.code where r.label <> 'x'
