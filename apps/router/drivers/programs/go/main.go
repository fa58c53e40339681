// The pgx program: pgx v4 as a Go service uses it. Every query goes through pgx's statement cache
// (named prepared statements, binary results), Exec with arguments, SendBatch, transactions with
// nested savepoints, CopyFrom (binary COPY) and CopyTo, a pgxpool from goroutines, CancelRequest,
// and the simple protocol where asked. One line per operation: `op<TAB>value`, a failure as
// `ERROR <SQLSTATE>`.
package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
)

// pgxVersion is set at build time from the packaged sources (-ldflags -X).
var pgxVersion = "v4"

var (
	ctx  = context.Background()
	url  = os.Getenv("DRV_URL")
	conn *pgx.Conn
)

const (
	insertAccount = "insert into accounts (id, owner, currency, balance, opened) values ($1, $2, $3, $4, $5)"
	insertEntry   = "insert into entries (account_id, id, amount, note) values ($1, $2, $3, $4)"
	slowScatter   = "select count(*) from accounts where length(regexp_replace(repeat(owner, 200000), '[0-9]', 'x', 'g')) > 0"
)

var currencies = []string{"EUR", "USD", "GBP"}

func emit(op, value string) {
	value = strings.Join(strings.Fields(strings.ReplaceAll(value, "\t", " ")), " ")
	fmt.Printf("%s\t%s\n", op, value)
}

// plain turns what rows.Values() returns into JSON-friendly values, numeric as Postgres prints it.
func plain(v interface{}) interface{} {
	switch x := v.(type) {
	case nil:
		return nil
	case pgtype.Numeric:
		return numericText(x)
	case time.Time:
		return x.Format("2006-01-02")
	case []byte:
		return fmt.Sprintf("\\x%x", x)
	case []interface{}:
		out := make([]interface{}, len(x))
		for i, y := range x {
			out[i] = plain(y)
		}
		return out
	default:
		return x
	}
}

// numericText prints a numeric as Postgres does (700.00, not pgtype's 70000e-2).
func numericText(n pgtype.Numeric) string {
	if n.Status != pgtype.Present {
		return "null"
	}
	if n.NaN {
		return "NaN"
	}
	digits := new(big.Int).Abs(n.Int).String()
	sign := ""
	if n.Int.Sign() < 0 {
		sign = "-"
	}
	if n.Exp >= 0 {
		return sign + digits + strings.Repeat("0", int(n.Exp))
	}
	scale := int(-n.Exp)
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

func show(v interface{}) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unprintable: %v", err)
	}
	return string(b)
}

func sqlstate(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return fmt.Sprintf("client:%T", errors.Unwrap(err))
}

func run(op string, fn func() (interface{}, error)) {
	v, err := fn()
	if err != nil {
		emit(op, "ERROR "+sqlstate(err))
		fmt.Fprintf(os.Stderr, "%s: %v\n", op, err)
		recoverConn()
		return
	}
	emit(op, show(v))
}

func recoverConn() {
	if conn.IsClosed() || conn.Ping(ctx) != nil {
		conn.Close(ctx)
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			fmt.Fprintf(os.Stderr, "reconnect: %v\n", err)
			os.Exit(1)
		}
		conn = c
	}
}

func caught(fn func() (interface{}, error)) string {
	v, err := fn()
	if err != nil {
		return "caught " + sqlstate(err)
	}
	return "no error: " + show(v)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...interface{}) (pgx.Rows, error)
}

func query(q querier, sql string, args ...interface{}) ([]interface{}, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []interface{}{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, plain(vals))
	}
	return out, rows.Err()
}

func q(sql string, args ...interface{}) (interface{}, error) { return query(conn, sql, args...) }

func exec(sql string, args ...interface{}) (interface{}, error) {
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return tag.RowsAffected(), nil
}

func account(id int64, owner, currency, balance, opened string) []interface{} {
	return []interface{}{id, owner, currency, balance, opened}
}

func seedAccount(i int) []interface{} {
	return account(int64(i), fmt.Sprintf("owner-%d", i), currencies[i%3], fmt.Sprintf("%d.00", i*100),
		fmt.Sprintf("2024-01-%02d", i))
}

func inTx(fn func(tx pgx.Tx) (interface{}, error)) (interface{}, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	v, err := fn(tx)
	if err != nil {
		return nil, err
	}
	return v, tx.Commit(ctx)
}

func copyOut(sql string) ([]string, error) {
	var buf bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &buf, sql); err != nil {
		return nil, err
	}
	lines := []string{}
	for _, l := range strings.Split(buf.String(), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// cancelAfter runs sql on its own connection and sends a CancelRequest for it after d.
func cancelAfter(d time.Duration, sql string, args ...interface{}) (interface{}, error) {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	timer := time.AfterFunc(d, func() {
		if err := c.PgConn().CancelRequest(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "cancel: %v\n", err)
		}
	})
	defer timer.Stop()
	return caught(func() (interface{}, error) { return query(c, sql, args...) }), nil
}

func main() {
	fmt.Printf("@version pgx %s, Go %s\n", pgxVersion, strings.TrimPrefix(runtime.Version(), "go"))
	var err error
	conn, err = pgx.Connect(ctx, url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "connect: %v\n", err)
		os.Exit(1)
	}
	program()
	conn.Close(ctx)
}

func program() {
	run("connect", func() (interface{}, error) { return q("select current_user, current_database()") })
	run("schema", func() (interface{}, error) {
		for _, s := range []string{
			"create table currencies (code text primary key, name text not null, rate numeric(10,4) not null)",
			`create table accounts (id bigint primary key, owner text not null, currency text not null
			   references currencies (code), balance numeric(12,2) not null, status text not null default 'open',
			   opened date not null)`,
			`create table entries (account_id bigint not null references accounts (id), id bigint not null,
			   amount numeric(12,2) not null, note text, primary key (account_id, id))`,
			"create table audit (id bigint primary key, account_id bigint, action text not null)",
			`insert into currencies values ('EUR', 'Euro', 1.0000), ('USD', 'US dollar', 1.0800),
			   ('GBP', 'Pound sterling', 0.8600)`,
		} {
			if _, err := conn.Exec(ctx, s); err != nil {
				return nil, err
			}
		}
		return "ok", nil
	})
	run("seed", func() (interface{}, error) {
		n := map[string]int64{}
		for i := 1; i <= 20; i++ {
			tag, err := conn.Exec(ctx, insertAccount, seedAccount(i)...)
			if err != nil {
				return nil, err
			}
			n["accounts"] += tag.RowsAffected()
		}
		for i := 1; i <= 20; i++ {
			for j := 1; j <= 3; j++ {
				tag, err := conn.Exec(ctx, insertEntry, int64(i), int64(j), fmt.Sprintf("%d.00", i*10+j), fmt.Sprintf("e%d", j))
				if err != nil {
					return nil, err
				}
				n["entries"] += tag.RowsAffected()
			}
		}
		tag, err := conn.Exec(ctx, "insert into audit (id, account_id, action) values ($1, $2, $3)", int64(1), int64(1), "opened")
		if err != nil {
			return nil, err
		}
		n["audit"] = tag.RowsAffected()
		return n, nil
	})

	run("read.key", func() (interface{}, error) {
		return q("select id, owner, currency, balance, status, opened from accounts where id = $1", int64(7))
	})
	run("read.key.join", func() (interface{}, error) {
		return q(`select a.id, a.owner, c.name, e.id, e.amount from accounts a
		  join entries e on e.account_id = a.id join currencies c on c.code = a.currency
		 where a.id = $1 order by e.id`, int64(7))
	})
	run("read.in", func() (interface{}, error) {
		return q("select id, balance from accounts where id in ($1, $2, $3) order by id", int64(1), int64(2), int64(3))
	})
	run("read.any", func() (interface{}, error) {
		return q("select id, balance from accounts where id = any($1) order by id", []int64{4, 5, 6})
	})
	run("read.scatter.order", func() (interface{}, error) {
		return q("select id, owner, balance from accounts order by balance desc, id limit $1", 5)
	})
	run("read.scatter.agg", func() (interface{}, error) {
		return q(`select currency, count(*), sum(balance), min(balance), max(opened) from accounts
		  group by currency order by currency`)
	})
	run("read.scatter.aggexpr", func() (interface{}, error) {
		return q("select count(*)::int, coalesce(sum(balance), 0), round(avg(balance), 2) from accounts")
	})
	run("read.scatter.join", func() (interface{}, error) {
		return q(`select a.currency, count(*), sum(e.amount) from accounts a
		  join entries e on e.account_id = a.id group by a.currency order by a.currency`)
	})
	run("read.scatter.ref", func() (interface{}, error) {
		return q(`select c.name, count(*) from accounts a join currencies c on c.code = a.currency
		  group by c.name order by c.name`)
	})
	run("read.scatter.param", func() (interface{}, error) {
		return q("select count(*) from accounts where balance > $1", "1000")
	})
	run("read.scatter.simple", func() (interface{}, error) {
		return query(conn, "select count(*), sum(balance) from accounts where balance > $1", pgx.QuerySimpleProtocol(true), "1000")
	})
	run("read.subquery", func() (interface{}, error) {
		return q("select count(*) from (select distinct currency from accounts) s")
	})
	run("read.now", func() (interface{}, error) {
		return q("select count(*) from accounts where opened < current_date")
	})
	run("read.ref", func() (interface{}, error) { return q("select code, name, rate from currencies order by code") })
	run("read.global", func() (interface{}, error) { return q("select id, account_id, action from audit order by id") })
	run("txn.read.key", func() (interface{}, error) {
		return inTx(func(tx pgx.Tx) (interface{}, error) {
			return query(tx, "select balance from accounts where id = $1", int64(8))
		})
	})
	run("txn.read.scatter", func() (interface{}, error) {
		return inTx(func(tx pgx.Tx) (interface{}, error) {
			return query(tx, "select count(*), sum(balance) from accounts")
		})
	})

	run("prepared.key", func() (interface{}, error) {
		out := []interface{}{}
		for id := int64(1); id <= 10; id++ {
			r, err := query(conn, "select balance from accounts where id = $1", id)
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		}
		return out, nil
	})
	run("prepared.scatter", func() (interface{}, error) {
		out := []interface{}{}
		for _, m := range []string{"0", "500", "1000", "1500", "1900", "5000"} {
			r, err := query(conn, "select count(*) from accounts where balance >= $1", m)
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		}
		return out, nil
	})
	run("cursor.declare", func() (interface{}, error) {
		return inTx(func(tx pgx.Tx) (interface{}, error) {
			if _, err := tx.Exec(ctx, "declare c cursor for select id from accounts order by id"); err != nil {
				return nil, err
			}
			a, err := query(tx, "fetch 5 from c")
			if err != nil {
				return nil, err
			}
			b, err := query(tx, "fetch 5 from c")
			if err != nil {
				return nil, err
			}
			_, err = tx.Exec(ctx, "close c")
			return []interface{}{a, b}, err
		})
	})

	run("copy.out", func() (interface{}, error) {
		l, err := copyOut("copy (select id, owner, balance from accounts order by id) to stdout")
		return strings.Join(l, "|"), err
	})
	run("copy.out.table", func() (interface{}, error) {
		l, err := copyOut("copy entries to stdout")
		if err != nil {
			return nil, err
		}
		sort.Strings(l)
		return fmt.Sprintf("lines=%d md5=%x", len(l), md5.Sum([]byte(strings.Join(l, "\n")))), nil
	})
	run("copy.out.csv", func() (interface{}, error) {
		l, err := copyOut("copy (select code, name from currencies order by code) to stdout with (format csv, header)")
		return strings.Join(l, "|"), err
	})

	run("pool", func() (interface{}, error) {
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			return nil, err
		}
		cfg.MaxConns = 4
		pool, err := pgxpool.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer pool.Close()
		updated := make([]interface{}, 20)
		reads := make([]interface{}, 20)
		errs := make([]error, 40)
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, err := query(pool, "update accounts set balance = balance + 1 where id = $1 returning balance", int64(i+1))
				updated[i], errs[i] = r, err
			}(i)
		}
		wg.Wait()
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, err := query(pool, "select count(*) from entries where account_id = $1", int64(i+1))
				reads[i], errs[20+i] = r, err
			}(i)
		}
		wg.Wait()
		// Every goroutine ran to its end; each reports its value or its SQLSTATE.
		for i, e := range errs {
			if e == nil {
				continue
			}
			if i < 20 {
				updated[i] = "ERROR " + sqlstate(e)
			} else {
				reads[i-20] = "ERROR " + sqlstate(e)
			}
		}
		return map[string]interface{}{"updated": updated, "reads": reads}, nil
	})

	run("cancel", func() (interface{}, error) { return cancelAfter(500*time.Millisecond, "select pg_sleep(5)") })
	run("cancel.key", func() (interface{}, error) {
		return cancelAfter(500*time.Millisecond, "select pg_sleep(3), id from accounts where id = $1", int64(1))
	})
	run("cancel.scatter", func() (interface{}, error) { return cancelAfter(500*time.Millisecond, slowScatter) })

	run("insert.multirow", func() (interface{}, error) {
		args := []interface{}{}
		for _, id := range []int64{101, 102, 103, 104} {
			args = append(args, account(id, fmt.Sprintf("multi-%d", id), "EUR", "50.00", "2024-02-01")...)
		}
		return exec(`insert into accounts (id, owner, currency, balance, opened) values
		  ($1, $2, $3, $4, $5), ($6, $7, $8, $9, $10), ($11, $12, $13, $14, $15), ($16, $17, $18, $19, $20)`, args...)
	})
	run("insert.batch", func() (interface{}, error) {
		b := &pgx.Batch{}
		for id := int64(201); id <= 210; id++ {
			b.Queue(insertAccount, account(id, fmt.Sprintf("batch-%d", id), "USD", "75.00", "2024-02-02")...)
		}
		br := conn.SendBatch(ctx, b)
		var n int64
		for i := 0; i < b.Len(); i++ {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return nil, err
			}
			n += tag.RowsAffected()
		}
		return n, br.Close()
	})
	run("insert.returning", func() (interface{}, error) {
		return q(insertAccount+" returning id, owner, balance, status", account(301, "returning", "GBP", "10.00", "2024-02-03")...)
	})
	run("insert.ref", func() (interface{}, error) {
		return exec("insert into currencies (code, name, rate) values ($1, $2, $3)", "CHF", "Swiss franc", "0.9500")
	})
	run("insert.global", func() (interface{}, error) {
		return exec("insert into audit (id, account_id, action) values ($1, $2, $3)", int64(2), int64(2), "closed")
	})
	run("update.key", func() (interface{}, error) {
		return exec("update accounts set balance = balance + $1 where id = $2", "5.00", int64(9))
	})
	run("update.scatter", func() (interface{}, error) {
		return exec("update accounts set status = $1 where balance >= $2 and id <= 20", "large", "1500")
	})
	run("update.scatter.literal", func() (interface{}, error) {
		return exec("update accounts set status = 'small' where balance < 300 and id <= 20")
	})
	run("update.ref", func() (interface{}, error) {
		return exec("update currencies set rate = $1 where code = $2", "1.0900", "USD")
	})
	run("delete.key", func() (interface{}, error) {
		return exec("delete from entries where account_id = $1 and id = $2", int64(10), int64(3))
	})
	run("delete.scatter", func() (interface{}, error) {
		return exec("delete from entries where note = $1 and amount > $2", "e3", "180")
	})

	run("txn.two_node", func() (interface{}, error) {
		_, err := inTx(func(tx pgx.Tx) (interface{}, error) {
			for _, s := range [][]interface{}{
				{"update accounts set balance = balance - $1 where id = $2", "50.00", int64(1)},
				{"update accounts set balance = balance + $1 where id = $2", "50.00", int64(2)},
				{insertEntry, int64(1), int64(10), "-50.00", "transfer"},
				{insertEntry, int64(2), int64(10), "50.00", "transfer"},
			} {
				if _, err := tx.Exec(ctx, s[0].(string), s[1:]...); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
		if err != nil {
			return nil, err
		}
		return q("select id, balance from accounts where id in (1, 2) order by id")
	})
	run("txn.rollback", func() (interface{}, error) {
		e := caught(func() (interface{}, error) {
			return inTx(func(tx pgx.Tx) (interface{}, error) {
				if _, err := tx.Exec(ctx, "update accounts set balance = 0 where id = $1", int64(3)); err != nil {
					return nil, err
				}
				return tx.Exec(ctx, insertAccount, account(4, "dup", "EUR", "1.00", "2024-01-01")...)
			})
		})
		r, err := q("select balance from accounts where id = $1", int64(3))
		return e + " " + show(r), err
	})
	run("txn.savepoint", func() (interface{}, error) {
		e, err := inTx(func(tx pgx.Tx) (interface{}, error) {
			if _, err := tx.Exec(ctx, "update accounts set balance = balance + 1 where id = $1", int64(5)); err != nil {
				return nil, err
			}
			e := caught(func() (interface{}, error) {
				sp, err := tx.Begin(ctx) // a nested transaction: a savepoint
				if err != nil {
					return nil, err
				}
				defer sp.Rollback(ctx)
				if _, err := sp.Exec(ctx, insertAccount, account(6, "dup", "EUR", "1.00", "2024-01-01")...); err != nil {
					return nil, err
				}
				return nil, sp.Commit(ctx)
			})
			_, err := tx.Exec(ctx, "update accounts set balance = balance + 1 where id = $1", int64(6))
			return e, err
		})
		if err != nil {
			return nil, err
		}
		r, err := q("select id, balance from accounts where id in (5, 6) order by id")
		return e.(string) + " " + show(r), err
	})

	run("copy.in", func() (interface{}, error) {
		var b strings.Builder
		for k := 0; k < 10; k++ {
			fmt.Fprintf(&b, "%d\tcopy-%d\tEUR\t20.00\t2024-02-04\n", 401+k, 401+k)
		}
		tag, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(b.String()),
			"copy accounts (id, owner, currency, balance, opened) from stdin")
		if err != nil {
			return nil, err
		}
		return tag.RowsAffected(), nil
	})
	run("copy.in.binary", func() (interface{}, error) {
		rows := [][]interface{}{}
		for k := int64(0); k < 5; k++ {
			// A pgtype.Numeric: pgx v4 cannot write a Go string as binary numeric.
			var balance pgtype.Numeric
			if err := balance.Set("30.00"); err != nil {
				return nil, err
			}
			rows = append(rows, []interface{}{411 + k, fmt.Sprintf("bin-%d", 411+k), "USD", balance,
				time.Date(2024, 2, 5, 0, 0, 0, 0, time.UTC)})
		}
		return conn.CopyFrom(ctx, pgx.Identifier{"accounts"}, []string{"id", "owner", "currency", "balance", "opened"},
			pgx.CopyFromRows(rows))
	})

	for _, f := range [][2]string{
		{"final.accounts", "select id, owner, currency, balance, status, opened from accounts order by id"},
		{"final.entries", "select account_id, id, amount, note from entries order by account_id, id"},
		{"final.currencies", "select code, name, rate from currencies order by code"},
		{"final.audit", "select id, account_id, action from audit order by id"},
	} {
		sql := f[1]
		run(f[0], func() (interface{}, error) { return q(sql) })
	}
}
