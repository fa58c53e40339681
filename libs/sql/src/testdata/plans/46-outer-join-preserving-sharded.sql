select t.id, r.label from t left join r on r.code = t.grp order by t.id
