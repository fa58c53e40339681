"""SQLAlchemy's ORM (1.4, psycopg2) as a web application uses it: declarative models with
relationships, metadata.create_all, Sessions whose every query runs in a transaction, add_all and
bulk inserts (executemany batched into VALUES), query().get/filter/order_by/limit/count,
aggregates, joins and eager loading, bulk update and delete, nested transactions (savepoints),
IntegrityError and rollback, yield_per with a server-side cursor, the engine's pool from threads,
raw COPY through the DBAPI connection."""

import concurrent.futures
import datetime
import decimal
import io
import threading

import sqlalchemy
from sqlalchemy import BigInteger, Column, Date, ForeignKey, Numeric, Text, create_engine, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, declarative_base, joinedload, relationship

from common import FINAL, SLOW_SCATTER, URL, caught, meta, settled, show, step

meta(f"version SQLAlchemy {sqlalchemy.__version__} (psycopg2)")

Base = declarative_base()
D = decimal.Decimal


class Currency(Base):
    __tablename__ = "currencies"
    code = Column(Text, primary_key=True)
    name = Column(Text, nullable=False)
    rate = Column(Numeric(10, 4), nullable=False)


class Account(Base):
    __tablename__ = "accounts"
    id = Column(BigInteger, primary_key=True, autoincrement=False)
    owner = Column(Text, nullable=False)
    currency = Column(Text, ForeignKey("currencies.code"), nullable=False)
    balance = Column(Numeric(12, 2), nullable=False)
    status = Column(Text, nullable=False, server_default="open")
    opened = Column(Date, nullable=False)
    entries = relationship("Entry", back_populates="account", order_by="Entry.id")
    currency_row = relationship("Currency")


class Entry(Base):
    __tablename__ = "entries"
    account_id = Column(BigInteger, ForeignKey("accounts.id"), primary_key=True, autoincrement=False)
    id = Column(BigInteger, primary_key=True, autoincrement=False)
    amount = Column(Numeric(12, 2), nullable=False)
    note = Column(Text)
    account = relationship("Account", back_populates="entries")


class Audit(Base):
    __tablename__ = "audit"
    id = Column(BigInteger, primary_key=True, autoincrement=False)
    account_id = Column(BigInteger)
    action = Column(Text, nullable=False)


engine = create_engine(URL.replace("postgresql://", "postgresql+psycopg2://", 1), pool_size=4, max_overflow=0,
                       future=True)
CURRENCIES = ["EUR", "USD", "GBP"]


def new_account(i, owner=None, currency=None, balance=None, opened=None):
    return Account(id=i, owner=owner or f"owner-{i}", currency=currency or CURRENCIES[i % 3],
                   balance=D(balance) if balance else D(f"{i * 100}.00"), opened=opened or datetime.date(2024, 1, i))


def acct_row(a):
    return [a.id, a.owner, a.currency, a.balance, a.status, a.opened]


def run(op, fn):
    step(op, fn)


def schema():
    Base.metadata.create_all(engine)
    with Session(engine) as s, s.begin():
        s.add_all([Currency(code="EUR", name="Euro", rate=D("1.0000")),
                   Currency(code="USD", name="US dollar", rate=D("1.0800")),
                   Currency(code="GBP", name="Pound sterling", rate=D("0.8600"))])
    return "ok"


def seed():
    with Session(engine) as s, s.begin():
        s.add_all([new_account(i) for i in range(1, 21)])
        s.flush()
        s.add_all([Entry(account_id=i, id=j, amount=D(f"{i * 10 + j}.00"), note=f"e{j}")
                   for i in range(1, 21) for j in range(1, 4)])
        s.add(Audit(id=1, account_id=1, action="opened"))
    return "ok"


def in_session(fn):
    with Session(engine) as s:
        return fn(s)


run("schema", schema)
run("seed", seed)
run("orm.get", lambda: in_session(lambda s: acct_row(s.get(Account, 7))))
run("orm.relationship", lambda: in_session(
    lambda s: [[e.id, e.amount, e.account.currency_row.name] for e in s.get(Account, 7).entries]))
run("orm.joinedload", lambda: in_session(lambda s: [
    [a.id, len(a.entries)] for a in s.query(Account).options(joinedload(Account.entries))
    .filter(Account.id.in_([1, 2, 3])).order_by(Account.id)]))
run("orm.filter_in", lambda: in_session(lambda s: [
    [a.id, a.balance] for a in s.query(Account).filter(Account.id.in_([1, 2, 3])).order_by(Account.id)]))
run("orm.order_limit", lambda: in_session(lambda s: [
    [a.id, a.balance] for a in s.query(Account).order_by(Account.balance.desc(), Account.id).limit(5)]))
run("orm.group_by", lambda: in_session(lambda s: [list(r) for r in s.query(
    Account.currency, func.count(Account.id), func.sum(Account.balance))
    .group_by(Account.currency).order_by(Account.currency)]))
run("orm.aggregate", lambda: in_session(lambda s: list(s.query(
    func.count(Account.id), func.sum(Account.balance), func.max(Account.opened)).one())))
run("orm.count", lambda: in_session(lambda s: s.query(Account).filter(Account.balance > D(1000)).count()))
run("orm.scalar_count", lambda: in_session(lambda s: s.execute(
    select(func.count()).select_from(Account).where(Account.balance > D(1000))).scalar()))
run("orm.paginate", lambda: in_session(lambda s: {
    "total": s.query(Account).count(),
    "page2": [a.id for a in s.query(Account).order_by(Account.id).limit(5).offset(5)]}))
run("orm.join", lambda: in_session(lambda s: [list(r) for r in s.query(
    Account.currency, func.count(Entry.id), func.sum(Entry.amount))
    .join(Entry, Entry.account_id == Account.id).group_by(Account.currency).order_by(Account.currency)]))
run("orm.exists", lambda: in_session(lambda s: s.query(
    s.query(Account).filter(Account.owner == "owner-5").exists()).scalar()))
run("orm.reference", lambda: in_session(lambda s: [[c.code, c.rate] for c in s.query(Currency).order_by(Currency.code)]))
run("orm.global", lambda: in_session(lambda s: [[a.id, a.action] for a in s.query(Audit).order_by(Audit.id)]))
run("orm.now", lambda: in_session(lambda s: s.query(Account).filter(Account.opened < func.current_date()).count()))


def yield_per():
    with Session(engine) as s:
        ids = [a.id for a in s.query(Account).order_by(Account.id)
               .execution_options(stream_results=True).yield_per(6)]
        return ids


run("orm.yield_per", yield_per)


def pool():
    def work(i):
        with Session(engine) as s, s.begin():
            a = s.get(Account, i)
            a.balance = a.balance + 1
            s.flush()
            return [i, a.balance]

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        return list(ex.map(settled(lambda i: work(i)[1]), range(1, 21)))


run("pool", pool)


def cancel():
    with engine.connect() as c:
        raw = c.connection.dbapi_connection

        def slow():
            return c.exec_driver_sql(SLOW_SCATTER).all()
        t = threading.Timer(0.5, raw.cancel)
        t.start()
        try:
            return caught(slow)
        finally:
            t.cancel()


run("cancel.scatter", cancel)


def create():
    with Session(engine) as s, s.begin():
        s.add(new_account(301, "returning", "GBP", "10.00", datetime.date(2024, 2, 3)))
        s.flush()
        return s.get(Account, 301).status


def add_all():
    with Session(engine) as s, s.begin():
        s.add_all([new_account(201 + k, f"batch-{201 + k}", "USD", "75.00", datetime.date(2024, 2, 2))
                   for k in range(10)])
    return "ok"


def bulk_insert():
    with Session(engine) as s, s.begin():
        s.bulk_insert_mappings(Account, [
            dict(id=211 + k, owner=f"bulk-{211 + k}", currency="GBP", balance=D("80.00"),
                 opened=datetime.date(2024, 2, 2)) for k in range(6)])
    return "ok"


def add_reference():
    with Session(engine) as s, s.begin():
        s.add(Currency(code="CHF", name="Swiss franc", rate=D("0.9500")))
    return "ok"


def add_global():
    with Session(engine) as s, s.begin():
        s.add(Audit(id=2, account_id=2, action="closed"))
    return "ok"


def update_one():
    with Session(engine) as s, s.begin():
        a = s.get(Account, 9)
        a.balance += D("5.00")
    return "ok"


def bulk_update():
    with Session(engine) as s, s.begin():
        return s.query(Account).filter(Account.balance >= D(1500), Account.id <= 20).update(
            {Account.status: "large"}, synchronize_session=False)


def bulk_delete():
    with Session(engine) as s, s.begin():
        return s.query(Entry).filter(Entry.note == "e3", Entry.amount > D(180)).delete(synchronize_session=False)


def delete_one():
    with Session(engine) as s, s.begin():
        s.delete(s.get(Entry, (10, 3)))
    return "ok"


def update_reference():
    with Session(engine) as s, s.begin():
        s.get(Currency, "USD").rate = D("1.0900")
    return "ok"


def two_node():
    with Session(engine) as s, s.begin():
        a, b = s.get(Account, 1), s.get(Account, 2)
        a.balance -= D("50.00")
        b.balance += D("50.00")
        s.add_all([Entry(account_id=1, id=10, amount=D("-50.00"), note="transfer"),
                   Entry(account_id=2, id=10, amount=D("50.00"), note="transfer")])
    return "ok"


def rollback():
    def txn():
        with Session(engine) as s, s.begin():
            s.get(Account, 3).balance = D(0)
            s.flush()
            s.add(new_account(4, "dup"))
            s.flush()
    err = caught(txn)
    return f"{err} {show(in_session(lambda s: s.get(Account, 3).balance))}"


def savepoint():
    err = "no error"
    with Session(engine) as s, s.begin():
        s.get(Account, 5).balance += 1
        s.flush()
        try:
            with s.begin_nested():
                s.add(new_account(6, "dup"))
        except IntegrityError as e:
            err = f"caught {e.orig.pgcode}"
        s.get(Account, 6).balance += 1
    return err


run("orm.create", create)
run("orm.add_all", add_all)
run("orm.bulk_insert", bulk_insert)
run("orm.add_reference", add_reference)
run("orm.add_global", add_global)
run("orm.update", update_one)
run("orm.bulk_update", bulk_update)
run("orm.bulk_delete", bulk_delete)
run("orm.delete", delete_one)
run("orm.update_reference", update_reference)
run("txn.two_node", two_node)
run("txn.rollback", rollback)
run("txn.savepoint", savepoint)


def copy_in():
    raw = engine.raw_connection()
    try:
        with raw.cursor() as cur:
            data = "".join(f"{401 + k}\tcopy-{401 + k}\tEUR\t20.00\t2024-02-04\n" for k in range(10))
            cur.copy_expert("copy accounts (id, owner, currency, balance, opened) from stdin", io.StringIO(data))
            n = cur.rowcount
        raw.commit()
        return n
    finally:
        raw.close()


run("copy.in", copy_in)


def final(sql):
    with engine.connect() as c:
        return [list(r) for r in c.exec_driver_sql(sql)]


for op, sql in FINAL.items():
    run(op, lambda sql=sql: final(sql))
engine.dispose()
