select grp, count(*) from t where id = any($1) group by grp order by grp limit $2
