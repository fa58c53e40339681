listen jobs; notify jobs, 'hello'; unlisten *; discard all; show search_path; reset all; vacuum (analyze) orders
