"""Django's ORM (3.2, psycopg2) as a Django view would use it: models created with the schema
editor (as a migration does), autocommit outside `atomic`, objects.create/bulk_create, get,
filter/exclude/order_by/slicing, aggregate and annotate, distinct().count() and exists(),
select_related and prefetch_related, Paginator, F() updates, queryset update() and delete()
(Django collects what it deletes first), atomic blocks (nested: savepoints), IntegrityError,
iterator() (a server-side cursor), threads with their own connections, raw COPY."""

import concurrent.futures
import datetime
import decimal
import io
import os
import sys
import threading
from urllib.parse import unquote, urlparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django  # noqa: E402
from django.conf import settings  # noqa: E402

from common import DDL, FINAL, SLOW_SCATTER, URL, caught, meta, settled, show, step  # noqa: E402

u = urlparse(URL)
settings.configure(
    DATABASES={"default": {
        "ENGINE": "django.db.backends.postgresql", "NAME": u.path[1:], "USER": unquote(u.username or ""),
        "PASSWORD": unquote(u.password or ""), "HOST": u.hostname, "PORT": str(u.port),
    }},
    INSTALLED_APPS=["bank"],
    USE_TZ=False,
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()

from django.core.paginator import Paginator  # noqa: E402
from django.db import IntegrityError, connection, connections, transaction  # noqa: E402
from django.db.models import Count, F, Max, Sum  # noqa: E402

from bank.models import Account, Audit, Currency, Entry  # noqa: E402

meta(f"version Django {django.get_version()} (psycopg2)")
D = decimal.Decimal
CURRENCIES = ["EUR", "USD", "GBP"]
ENTRIES_DDL = next(d for d in DDL if d.startswith("create table entries"))


def recover():
    if connection.in_atomic_block:
        return
    connection.close()


def run(op, fn):
    step(op, fn, recover)


def schema():
    with connection.schema_editor() as editor:
        for m in (Currency, Account, Audit):
            editor.create_model(m)
    # Its primary key includes the shard key, which Django's single-column key cannot say.
    with connection.cursor() as cur:
        cur.execute(ENTRIES_DDL)
    Currency.objects.bulk_create([Currency(code="EUR", name="Euro", rate=D("1.0000")),
                                  Currency(code="USD", name="US dollar", rate=D("1.0800")),
                                  Currency(code="GBP", name="Pound sterling", rate=D("0.8600"))])
    return "ok"


def seed():
    for i in range(1, 21):
        Account.objects.create(id=i, owner=f"owner-{i}", currency_id=CURRENCIES[i % 3], balance=D(f"{i * 100}.00"),
                               opened=datetime.date(2024, 1, i))
    for i in range(1, 21):
        for j in range(1, 4):
            Entry.objects.create(id=i * 100 + j, account_id=i, amount=D(f"{i * 10 + j}.00"), note=f"e{j}")
    Audit.objects.create(id=1, account_id=1, action="opened")
    return "ok"


def acct(a):
    return [a.id, a.owner, a.currency_id, a.balance, a.status, a.opened]


run("schema", schema)
run("seed", seed)
run("orm.get", lambda: acct(Account.objects.get(pk=7)))
run("orm.select_related", lambda: [[e.id, e.amount, e.account.owner] for e in
                                   Entry.objects.select_related("account").filter(account_id=7).order_by("id")])
run("orm.prefetch_related", lambda: [[a.id, len(a.entries.all())] for a in
                                     Account.objects.filter(pk__in=[1, 2, 3]).prefetch_related("entries").order_by("id")])
run("orm.filter_in", lambda: [[a.id, a.balance] for a in Account.objects.filter(pk__in=[1, 2, 3]).order_by("id")])
run("orm.order_slice", lambda: [[a.id, a.balance] for a in Account.objects.order_by("-balance", "id")[:5]])
run("orm.aggregate", lambda: Account.objects.aggregate(n=Count("id"), total=Sum("balance"), last=Max("opened")))
run("orm.annotate", lambda: list(Account.objects.values("currency").annotate(n=Count("id"), total=Sum("balance"))
                                 .order_by("currency")))
run("orm.count", lambda: Account.objects.filter(balance__gt=1000).count())
run("orm.distinct_count", lambda: Account.objects.values("currency").distinct().count())
run("orm.exists", lambda: Account.objects.filter(owner="owner-5").exists())
run("orm.paginate", lambda: (lambda p: {"count": p.count, "pages": p.num_pages,
                                        "page2": [a.id for a in p.page(2)]})(
    Paginator(Account.objects.order_by("id"), 5)))
run("orm.join_filter", lambda: Entry.objects.filter(account__currency_id="EUR").aggregate(n=Count("id"), s=Sum("amount")))
run("orm.reference", lambda: [[c.code, c.rate] for c in Currency.objects.order_by("code")])
run("orm.global", lambda: [[a.id, a.action] for a in Audit.objects.order_by("id")])
run("orm.iterator", lambda: [a.id for a in Account.objects.order_by("id").iterator(chunk_size=6)])


def atomic(fn):
    with transaction.atomic():
        return fn()


run("txn.read.key", lambda: atomic(lambda: Account.objects.get(pk=8).balance))
run("txn.read.scatter", lambda: atomic(lambda: Account.objects.filter(balance__gt=1000).count()))


def threads():
    def work(i):
        try:
            with transaction.atomic():
                Account.objects.filter(pk=i).update(balance=F("balance") + 1)
                return [i, Account.objects.get(pk=i).balance]
        finally:
            connections.close_all()

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        return list(ex.map(settled(lambda i: work(i)[1]), range(1, 21)))


run("pool", threads)


def cancel():
    raw = connection.cursor().connection  # the psycopg2 connection under Django's

    def slow():
        with connection.cursor() as cur:
            cur.execute(SLOW_SCATTER)
            return cur.fetchall()
    t = threading.Timer(0.5, raw.cancel)
    t.start()
    try:
        return caught(slow)
    finally:
        t.cancel()


run("cancel.scatter", cancel)

run("orm.create", lambda: Account.objects.create(id=301, owner="returning", currency_id="GBP", balance=D("10.00"),
                                                 opened=datetime.date(2024, 2, 3)).status)
run("orm.bulk_create", lambda: len(Account.objects.bulk_create([
    Account(id=201 + k, owner=f"batch-{201 + k}", currency_id="USD", balance=D("75.00"),
            opened=datetime.date(2024, 2, 2)) for k in range(10)])))
run("orm.add_reference", lambda: Currency.objects.create(code="CHF", name="Swiss franc", rate=D("0.9500")).code)
run("orm.add_global", lambda: Audit.objects.create(id=2, account_id=2, action="closed").id)
run("orm.update_f", lambda: Account.objects.filter(pk=9).update(balance=F("balance") + D("5.00")))
run("orm.save", lambda: (lambda a: (setattr(a, "owner", "renamed-10"), a.save(), "ok")[-1])(Account.objects.get(pk=10)))
run("orm.bulk_update", lambda: Account.objects.filter(balance__gte=1500, id__lte=20).update(status="large"))
run("orm.bulk_delete", lambda: Entry.objects.filter(note="e3", amount__gt=180).delete()[0])
run("orm.delete", lambda: Entry.objects.get(pk=1003).delete()[0])
run("orm.update_reference", lambda: Currency.objects.filter(code="USD").update(rate=D("1.0900")))


def two_node():
    with transaction.atomic():
        Account.objects.filter(pk=1).update(balance=F("balance") - D("50.00"))
        Account.objects.filter(pk=2).update(balance=F("balance") + D("50.00"))
        Entry.objects.create(id=110, account_id=1, amount=D("-50.00"), note="transfer")
        Entry.objects.create(id=210, account_id=2, amount=D("50.00"), note="transfer")
    return [[a.id, a.balance] for a in Account.objects.filter(pk__in=[1, 2]).order_by("id")]


def rollback():
    def txn():
        with transaction.atomic():
            Account.objects.filter(pk=3).update(balance=0)
            Account.objects.create(id=4, owner="dup", currency_id="EUR", balance=1, opened=datetime.date(2024, 1, 1))
    err = caught(txn)
    return f"{err} {show(Account.objects.get(pk=3).balance)}"


def savepoint():
    err = "no error"
    with transaction.atomic():
        Account.objects.filter(pk=5).update(balance=F("balance") + 1)
        try:
            with transaction.atomic():
                Account.objects.create(id=6, owner="dup", currency_id="EUR", balance=1,
                                       opened=datetime.date(2024, 1, 1))
        except IntegrityError as e:
            err = f"caught {e.__cause__.pgcode}"
        Account.objects.filter(pk=6).update(balance=F("balance") + 1)
    return f"{err} {show([[a.id, a.balance] for a in Account.objects.filter(pk__in=[5, 6]).order_by('id')])}"


run("txn.two_node", two_node)
run("txn.rollback", rollback)
run("txn.savepoint", savepoint)


def copy_in():
    # Django keeps column defaults in Python, not in the table: COPY names every column.
    data = "".join(f"{401 + k}\tcopy-{401 + k}\tEUR\t20.00\topen\t2024-02-04\n" for k in range(10))
    with connection.cursor() as cur:
        cur.cursor.copy_expert("copy accounts (id, owner, currency, balance, status, opened) from stdin",
                               io.StringIO(data))
        return cur.cursor.rowcount


run("copy.in", copy_in)


def final(sql):
    with connection.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


for op, sql in FINAL.items():
    run(op, lambda sql=sql: final(sql))
connection.close()
