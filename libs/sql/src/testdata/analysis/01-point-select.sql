select id, name from users where id = $1
