select r.code, t.id from r left join t on t.grp = r.code
