// pgjdbc as a Java service uses it: PreparedStatements everywhere (server-prepared from the 5th
// execution, prepareThreshold), autocommit off for transactions (what Spring's @Transactional
// does), executeBatch with and without reWriteBatchedInserts, fetch size cursors, binary transfer,
// savepoints, CopyManager, a HikariCP pool from threads, Statement.cancel from another thread.
// One line per operation: `op<TAB>value`, a failure as `ERROR <SQLSTATE>`.

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;

public final class Drivers {
  interface Op {
    Object run() throws Exception;
  }

  static String jdbcUrl;
  static Properties props = new Properties();
  static Connection conn;

  static final String INSERT_ACCOUNT =
      "insert into accounts (id, owner, currency, balance, opened) values (?, ?, ?, ?, ?::date)";
  static final String INSERT_ENTRY = "insert into entries (account_id, id, amount, note) values (?, ?, ?, ?)";
  static final String[] CURRENCIES = {"EUR", "USD", "GBP"};
  static final String SLOW_SCATTER =
      "select count(*) from accounts where length(regexp_replace(repeat(owner, 200000), '[0-9]', 'x', 'g')) > 0";

  public static void main(String[] args) throws Exception {
    URI u = new URI(System.getenv("DRV_URL"));
    jdbcUrl = "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath();
    String[] userInfo = u.getRawUserInfo().split(":", 2);
    props.setProperty("user", URLDecoder.decode(userInfo[0], StandardCharsets.UTF_8));
    if (userInfo.length > 1) props.setProperty("password", URLDecoder.decode(userInfo[1], StandardCharsets.UTF_8));
    System.out.println("@version pgjdbc " + org.postgresql.util.DriverInfo.DRIVER_VERSION
        + ", HikariCP " + jarVersion(HikariConfig.class)
        + ", Java " + System.getProperty("java.version"));
    conn = connect(new Properties());
    program();
    conn.close();
    System.out.flush();
    System.exit(0);
  }

  /** The Bundle-Version in the manifest of the jar a class came from. */
  static String jarVersion(Class<?> c) throws Exception {
    java.io.File jar = new java.io.File(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (java.util.jar.JarFile f = new java.util.jar.JarFile(jar)) {
      return f.getManifest().getMainAttributes().getValue("Bundle-Version");
    }
  }

  static Connection connect(Properties extra) throws SQLException {
    Properties p = new Properties();
    p.putAll(props);
    p.putAll(extra);
    return DriverManager.getConnection(jdbcUrl, p);
  }

  static void emit(String op, String value) {
    System.out.println(op + "\t" + value.replaceAll("[\r\n\t]+", " "));
    System.out.flush();
  }

  static String sqlstate(Throwable e) {
    for (Throwable x = e; x != null; x = x.getCause()) {
      if (x instanceof SQLException) {
        String s = ((SQLException) x).getSQLState();
        if (s != null && s.length() == 5) return s;
      }
    }
    return "client:" + e.getClass().getSimpleName();
  }

  static void run(String op, Op fn) {
    try {
      Object v = fn.run();
      emit(op, v instanceof String ? (String) v : json(v));
    } catch (Exception e) {
      emit(op, "ERROR " + sqlstate(e));
      System.err.println(op + ": " + e);
      recover();
    }
  }

  /** After a failed operation: end the transaction, autocommit back on, or a new connection. */
  static void recover() {
    try {
      if (conn.isClosed() || !conn.isValid(5)) {
        conn = connect(new Properties());
        return;
      }
      if (!conn.getAutoCommit()) {
        conn.rollback();
        conn.setAutoCommit(true);
      }
    } catch (SQLException e) {
      try {
        conn = connect(new Properties());
      } catch (SQLException again) {
        throw new RuntimeException(again);
      }
    }
  }

  static String caught(Op fn) {
    try {
      return "no error: " + json(fn.run());
    } catch (Exception e) {
      return "caught " + sqlstate(e);
    }
  }

  static String settled(Future<String> f) throws InterruptedException {
    try {
      return f.get();
    } catch (java.util.concurrent.ExecutionException e) {
      return "ERROR " + sqlstate(e.getCause());
    }
  }

  static String json(Object v) {
    if (v == null) return "null";
    if (v instanceof String) return "\"" + ((String) v).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    if (v instanceof Number || v instanceof Boolean) return v.toString();
    if (v instanceof Map) {
      StringBuilder b = new StringBuilder("{");
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (b.length() > 1) b.append(",");
        b.append(json(e.getKey().toString())).append(":").append(json(e.getValue()));
      }
      return b.append("}").toString();
    }
    if (v instanceof List) {
      StringBuilder b = new StringBuilder("[");
      for (Object x : (List<?>) v) {
        if (b.length() > 1) b.append(",");
        b.append(json(x));
      }
      return b.append("]").toString();
    }
    return json(v.toString());
  }

  static List<List<String>> rows(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    List<List<String>> out = new ArrayList<>();
    while (rs.next()) {
      List<String> row = new ArrayList<>();
      for (int i = 1; i <= md.getColumnCount(); i++) row.add(rs.getString(i));
      out.add(row);
    }
    return out;
  }

  static PreparedStatement prepare(Connection c, String sql, Object... params) throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    for (int i = 0; i < params.length; i++) ps.setObject(i + 1, params[i]);
    return ps;
  }

  static List<List<String>> query(Connection c, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = prepare(c, sql, params); ResultSet rs = ps.executeQuery()) {
      return rows(rs);
    }
  }

  static List<List<String>> q(String sql, Object... params) throws SQLException {
    return query(conn, sql, params);
  }

  static int update(String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = prepare(conn, sql, params)) {
      return ps.executeUpdate();
    }
  }

  static Object[] account(long id, String owner, String currency, String balance, String opened) {
    return new Object[] {id, owner, currency, new BigDecimal(balance), opened};
  }

  static Object[] seedAccount(int i) {
    return account(i, "owner-" + i, CURRENCIES[i % 3], (i * 100) + ".00", String.format("2024-01-%02d", i));
  }

  interface Txn {
    Object run(Connection c) throws Exception;
  }

  /** A transaction with autocommit off, committed, as Spring's @Transactional runs one. */
  static Object inTxn(Txn body) throws Exception {
    conn.setAutoCommit(false);
    try {
      Object v = body.run(conn);
      conn.commit();
      return v;
    } catch (Exception e) {
      conn.rollback();
      throw e;
    } finally {
      conn.setAutoCommit(true);
    }
  }

  static String md5(String s) throws Exception {
    byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
    StringBuilder b = new StringBuilder();
    for (byte x : d) b.append(String.format("%02x", x));
    return b.toString();
  }

  static List<String> copyOut(String sql) throws Exception {
    StringWriter w = new StringWriter();
    new CopyManager(conn.unwrap(BaseConnection.class)).copyOut(sql, w);
    List<String> lines = new ArrayList<>();
    for (String l : w.toString().split("\n")) if (!l.isEmpty()) lines.add(l);
    return lines;
  }

  static String cancelAfter(long ms, String sql, Object... params) throws Exception {
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    try (PreparedStatement ps = prepare(conn, sql, params)) {
      timer.schedule(() -> {
        try {
          ps.cancel();
        } catch (SQLException e) {
          System.err.println("cancel: " + e);
        }
      }, ms, TimeUnit.MILLISECONDS);
      return caught(() -> {
        try (ResultSet rs = ps.executeQuery()) {
          return rows(rs);
        }
      });
    } finally {
      timer.shutdownNow();
    }
  }

  static void program() throws Exception {
    run("connect", () -> q("select current_user, current_database()"));
    run("schema", () -> {
      try (Statement s = conn.createStatement()) {
        s.execute("create table currencies (code text primary key, name text not null, rate numeric(10,4) not null)");
        s.execute("create table accounts (id bigint primary key, owner text not null, currency text not null "
            + "references currencies (code), balance numeric(12,2) not null, status text not null default 'open', "
            + "opened date not null)");
        s.execute("create table entries (account_id bigint not null references accounts (id), id bigint not null, "
            + "amount numeric(12,2) not null, note text, primary key (account_id, id))");
        s.execute("create table audit (id bigint primary key, account_id bigint, action text not null)");
        s.execute("insert into currencies values ('EUR', 'Euro', 1.0000), ('USD', 'US dollar', 1.0800), "
            + "('GBP', 'Pound sterling', 0.8600)");
      }
      return "ok";
    });
    run("seed", () -> {
      int a = 0;
      int e = 0;
      for (int i = 1; i <= 20; i++) a += update(INSERT_ACCOUNT, seedAccount(i));
      for (int i = 1; i <= 20; i++)
        for (int j = 1; j <= 3; j++)
          e += update(INSERT_ENTRY, (long) i, (long) j, new BigDecimal((i * 10 + j) + ".00"), "e" + j);
      int audit = update("insert into audit (id, account_id, action) values (?, ?, ?)", 1L, 1L, "opened");
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("accounts", a);
      m.put("entries", e);
      m.put("audit", audit);
      return m;
    });

    run("read.key", () -> q("select id, owner, currency, balance, status, opened from accounts where id = ?", 7L));
    run("read.key.join", () -> q("select a.id, a.owner, c.name, e.id, e.amount from accounts a "
        + "join entries e on e.account_id = a.id join currencies c on c.code = a.currency where a.id = ? order by e.id", 7L));
    run("read.in", () -> q("select id, balance from accounts where id in (?, ?, ?) order by id", 1L, 2L, 3L));
    run("read.any", () -> {
      Array arr = conn.createArrayOf("bigint", new Long[] {4L, 5L, 6L});
      return q("select id, balance from accounts where id = any(?) order by id", arr);
    });
    run("read.scatter.order", () -> q("select id, owner, balance from accounts order by balance desc, id limit ?", 5));
    run("read.scatter.agg", () -> q("select currency, count(*), sum(balance), min(balance), max(opened) "
        + "from accounts group by currency order by currency"));
    run("read.scatter.aggexpr", () ->
        q("select count(*)::int, coalesce(sum(balance), 0), round(avg(balance), 2) from accounts"));
    run("read.scatter.join", () -> q("select a.currency, count(*), sum(e.amount) from accounts a "
        + "join entries e on e.account_id = a.id group by a.currency order by a.currency"));
    run("read.scatter.ref", () -> q("select c.name, count(*) from accounts a join currencies c on c.code = a.currency "
        + "group by c.name order by c.name"));
    run("read.scatter.param", () -> q("select count(*) from accounts where balance > ?", new BigDecimal(1000)));
    run("read.subquery", () -> q("select count(*) from (select distinct currency from accounts) s"));
    run("read.now", () -> q("select count(*) from accounts where opened < current_date"));
    run("read.ref", () -> q("select code, name, rate from currencies order by code"));
    run("read.global", () -> q("select id, account_id, action from audit order by id"));
    run("txn.read.key", () -> inTxn(c -> query(c, "select balance from accounts where id = ?", 8L)));
    run("txn.read.scatter", () -> inTxn(c -> query(c, "select count(*), sum(balance) from accounts")));

    run("binary.key", () -> {
      Properties p = new Properties();
      p.setProperty("prepareThreshold", "-1"); // -1: binary transfer from the first execution
      try (Connection c = connect(p)) {
        return query(c, "select id, balance, opened, owner from accounts where id = ?", 11L);
      }
    });
    run("binary.scatter", () -> {
      Properties p = new Properties();
      p.setProperty("prepareThreshold", "-1");
      try (Connection c = connect(p)) {
        return query(c, "select currency, count(*), sum(balance) from accounts group by currency order by currency");
      }
    });
    run("prepared.key", () -> {
      // prepareThreshold 5 (the default): server-prepared, binary results from the 5th execution on.
      List<String> out = new ArrayList<>();
      try (PreparedStatement ps = conn.prepareStatement("select balance from accounts where id = ?")) {
        for (long id = 1; id <= 10; id++) {
          ps.setLong(1, id);
          try (ResultSet rs = ps.executeQuery()) {
            out.addAll(rows(rs).get(0));
          }
        }
      }
      return out;
    });
    run("prepared.scatter", () -> {
      List<String> out = new ArrayList<>();
      try (PreparedStatement ps = conn.prepareStatement("select count(*) from accounts where balance >= ?")) {
        for (int m : new int[] {0, 500, 1000, 1500, 1900, 5000, 0, 500, 1000, 1500}) {
          ps.setBigDecimal(1, new BigDecimal(m));
          try (ResultSet rs = ps.executeQuery()) {
            out.addAll(rows(rs).get(0));
          }
        }
      }
      return out;
    });
    run("cursor", () -> inTxn(c -> {
      List<Object> ids = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("select id, balance from accounts order by id")) {
        ps.setFetchSize(6); // with autocommit off: a portal fetched 6 rows at a time
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) ids.add(rs.getLong(1));
        }
      }
      return ids;
    }));
    run("cursor.declare", () -> inTxn(c -> {
      try (Statement s = c.createStatement()) {
        s.execute("declare c cursor for select id from accounts order by id");
        List<Object> out = new ArrayList<>();
        try (ResultSet rs = s.executeQuery("fetch 5 from c")) {
          out.add(rows(rs));
        }
        try (ResultSet rs = s.executeQuery("fetch 5 from c")) {
          out.add(rows(rs));
        }
        s.execute("close c");
        return out;
      }
    }));

    run("copy.out", () -> String.join("|", copyOut("copy (select id, owner, balance from accounts order by id) to stdout")));
    run("copy.out.table", () -> {
      List<String> lines = copyOut("copy entries to stdout");
      java.util.Collections.sort(lines);
      return "lines=" + lines.size() + " md5=" + md5(String.join("\n", lines));
    });
    run("copy.out.csv", () -> String.join("|",
        copyOut("copy (select code, name from currencies order by code) to stdout with (format csv, header)")));

    run("pool", () -> {
      HikariConfig cfg = new HikariConfig();
      cfg.setJdbcUrl(jdbcUrl);
      cfg.setDataSourceProperties(props);
      cfg.setMaximumPoolSize(4);
      try (HikariDataSource ds = new HikariDataSource(cfg)) {
        ExecutorService ex = Executors.newFixedThreadPool(8);
        try {
          List<Future<String>> updated = new ArrayList<>();
          for (long i = 1; i <= 20; i++) {
            final long id = i;
            updated.add(ex.submit(() -> {
              try (Connection c = ds.getConnection()) {
                return query(c, "update accounts set balance = balance + 1 where id = ? returning balance", id).get(0).get(0);
              }
            }));
          }
          List<Future<String>> reads = new ArrayList<>();
          for (long i = 1; i <= 20; i++) {
            final long id = i;
            reads.add(ex.submit(() -> {
              try (Connection c = ds.getConnection()) {
                return query(c, "select count(*) from entries where account_id = ?", id).get(0).get(0);
              }
            }));
          }
          Map<String, Object> m = new LinkedHashMap<>();
          // Every task runs to its end, each reporting its value or its SQLSTATE.
          List<String> u = new ArrayList<>();
          for (Future<String> f : updated) u.add(settled(f));
          List<String> r = new ArrayList<>();
          for (Future<String> f : reads) r.add(settled(f));
          m.put("updated", u);
          m.put("reads", r);
          return m;
        } finally {
          ex.shutdownNow();
        }
      }
    });

    run("cancel", () -> cancelAfter(500, "select pg_sleep(5)"));
    run("cancel.key", () -> cancelAfter(500, "select pg_sleep(3), id from accounts where id = ?", 1L));
    run("cancel.scatter", () -> cancelAfter(500, SLOW_SCATTER));

    run("insert.multirow", () -> {
      List<Object> params = new ArrayList<>();
      for (long id : new long[] {101, 102, 103, 104})
        params.addAll(Arrays.asList(account(id, "multi-" + id, "EUR", "50.00", "2024-02-01")));
      return update("insert into accounts (id, owner, currency, balance, opened) values "
          + "(?, ?, ?, ?, ?::date), (?, ?, ?, ?, ?::date), (?, ?, ?, ?, ?::date), (?, ?, ?, ?, ?::date)", params.toArray());
    });
    run("insert.batch", () -> {
      try (PreparedStatement ps = conn.prepareStatement(INSERT_ACCOUNT)) {
        for (long id = 201; id <= 210; id++) {
          Object[] a = account(id, "batch-" + id, "USD", "75.00", "2024-02-02");
          for (int i = 0; i < a.length; i++) ps.setObject(i + 1, a[i]);
          ps.addBatch();
        }
        return Arrays.stream(ps.executeBatch()).sum();
      }
    });
    run("insert.batch.rewrite", () -> {
      Properties p = new Properties();
      p.setProperty("reWriteBatchedInserts", "true");
      try (Connection c = connect(p); PreparedStatement ps = c.prepareStatement(INSERT_ACCOUNT)) {
        for (long id = 211; id <= 216; id++) {
          Object[] a = account(id, "rewrite-" + id, "GBP", "80.00", "2024-02-02");
          for (int i = 0; i < a.length; i++) ps.setObject(i + 1, a[i]);
          ps.addBatch();
        }
        ps.executeBatch();
        return "ok";
      }
    });
    run("insert.returning", () -> q(INSERT_ACCOUNT + " returning id, owner, balance, status",
        account(301, "returning", "GBP", "10.00", "2024-02-03")));
    run("insert.ref", () -> update("insert into currencies (code, name, rate) values (?, ?, ?)",
        "CHF", "Swiss franc", new BigDecimal("0.9500")));
    run("insert.global", () -> update("insert into audit (id, account_id, action) values (?, ?, ?)", 2L, 2L, "closed"));
    run("update.key", () -> update("update accounts set balance = balance + ? where id = ?", new BigDecimal("5.00"), 9L));
    run("update.scatter", () -> update("update accounts set status = ? where balance >= ? and id <= 20",
        "large", new BigDecimal(1500)));
    run("update.scatter.literal", () -> {
      try (Statement s = conn.createStatement()) {
        return s.executeUpdate("update accounts set status = 'small' where balance < 300 and id <= 20");
      }
    });
    run("update.ref", () -> update("update currencies set rate = ? where code = ?", new BigDecimal("1.0900"), "USD"));
    run("delete.key", () -> update("delete from entries where account_id = ? and id = ?", 10L, 3L));
    run("delete.scatter", () -> update("delete from entries where note = ? and amount > ?", "e3", new BigDecimal(180)));

    run("txn.two_node", () -> {
      inTxn(c -> {
        update("update accounts set balance = balance - ? where id = ?", new BigDecimal("50.00"), 1L);
        update("update accounts set balance = balance + ? where id = ?", new BigDecimal("50.00"), 2L);
        update(INSERT_ENTRY, 1L, 10L, new BigDecimal("-50.00"), "transfer");
        update(INSERT_ENTRY, 2L, 10L, new BigDecimal("50.00"), "transfer");
        return null;
      });
      return q("select id, balance from accounts where id in (1, 2) order by id");
    });
    run("txn.rollback", () -> {
      String err = caught(() -> inTxn(c -> {
        update("update accounts set balance = 0 where id = ?", 3L);
        return update(INSERT_ACCOUNT, account(4, "dup", "EUR", "1.00", "2024-01-01"));
      }));
      return err + " " + json(q("select balance from accounts where id = ?", 3L));
    });
    run("txn.savepoint", () -> {
      String err = (String) inTxn(c -> {
        update("update accounts set balance = balance + 1 where id = ?", 5L);
        Savepoint sp = c.setSavepoint("s1");
        String e = caught(() -> update(INSERT_ACCOUNT, account(6, "dup", "EUR", "1.00", "2024-01-01")));
        c.rollback(sp);
        update("update accounts set balance = balance + 1 where id = ?", 6L);
        return e;
      });
      return err + " " + json(q("select id, balance from accounts where id in (5, 6) order by id"));
    });

    run("copy.in", () -> {
      StringBuilder b = new StringBuilder();
      for (int k = 0; k < 10; k++) b.append(401 + k).append("\tcopy-").append(401 + k).append("\tEUR\t20.00\t2024-02-04\n");
      CopyManager cm = new CopyManager(conn.unwrap(BaseConnection.class));
      return cm.copyIn("copy accounts (id, owner, currency, balance, opened) from stdin", new StringReader(b.toString()));
    });

    Map<String, String> fin = new LinkedHashMap<>();
    fin.put("final.accounts", "select id, owner, currency, balance, status, opened from accounts order by id");
    fin.put("final.entries", "select account_id, id, amount, note from entries order by account_id, id");
    fin.put("final.currencies", "select code, name, rate from currencies order by code");
    fin.put("final.audit", "select id, account_id, action from audit order by id");
    for (Map.Entry<String, String> e : fin.entrySet()) run(e.getKey(), () -> q(e.getValue()));
  }
}
