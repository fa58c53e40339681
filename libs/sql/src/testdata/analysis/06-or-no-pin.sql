select * from users where id = 1 or id = 2
