begin isolation level repeatable read; savepoint s1; set local search_path = app, public; rollback to savepoint s1; prepare transaction 'tessera:c1:17:n2'; commit prepared 'tessera:c1:17:n2'
