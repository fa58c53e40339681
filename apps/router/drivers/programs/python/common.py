"""What the Python programs share: the data every program writes, and one normalised output line
per operation (`op<TAB>value`; a failed operation prints `ERROR <SQLSTATE>`)."""

import datetime
import decimal
import json
import os
import sys
import threading
import time
import uuid

URL = os.environ["DRV_URL"]
CURRENCIES = ["EUR", "USD", "GBP"]

DDL = [
    "create table currencies (code text primary key, name text not null, rate numeric(10,4) not null)",
    """create table accounts (id bigint primary key, owner text not null,
         currency text not null references currencies (code), balance numeric(12,2) not null,
         status text not null default 'open', opened date not null)""",
    """create table entries (account_id bigint not null references accounts (id), id bigint not null,
         amount numeric(12,2) not null, note text, primary key (account_id, id))""",
    "create table audit (id bigint primary key, account_id bigint, action text not null)",
    """insert into currencies values ('EUR', 'Euro', 1.0000), ('USD', 'US dollar', 1.0800),
         ('GBP', 'Pound sterling', 0.8600)""",
]

FINAL = {
    "final.accounts": "select id, owner, currency, balance, status, opened from accounts order by id",
    "final.entries": "select account_id, id, amount, note from entries order by account_id, id",
    "final.currencies": "select code, name, rate from currencies order by code",
    "final.audit": "select id, account_id, action from audit order by id",
}


def seed_account(i):
    """Account i of the seed (1..20): (id, owner, currency, balance, opened)."""
    return (i, f"owner-{i}", CURRENCIES[i % 3], decimal.Decimal(f"{i * 100}.00"), datetime.date(2024, 1, i))


def seed_entry(i, j):
    """Entry j (1..3) of account i: (account_id, id, amount, note)."""
    return (i, j, decimal.Decimal(f"{i * 10 + j}.00"), f"e{j}")


def account(id_, owner, currency, balance, opened):
    return (id_, owner, currency, decimal.Decimal(balance), datetime.date.fromisoformat(opened))


def meta(text):
    print(f"@{text}", flush=True)


def emit(op, value):
    text = " ".join(str(value).split("\n"))
    print(f"{op}\t{text}", flush=True)


def _plain(v):
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if hasattr(v, "items") and hasattr(v, "keys"):  # asyncpg Record
        return [_plain(x) for x in v.values()]
    return v


def show(v):
    return v if isinstance(v, str) else json.dumps(_plain(v), ensure_ascii=False)


def sqlstate(e):
    """The SQLSTATE of a server error (through ORM wrappers too), or `client:<class>`."""
    seen = set()
    x = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        for attr in ("pgcode", "sqlstate"):
            code = getattr(x, attr, None)
            if isinstance(code, str) and len(code) == 5:
                return code
        x = getattr(x, "orig", None) or x.__cause__ or x.__context__
    return f"client:{type(e).__name__}"


def step(op, fn, recover=None):
    try:
        emit(op, show(fn()))
    except Exception as e:  # every failure is reported as its SQLSTATE, then the program goes on
        emit(op, f"ERROR {sqlstate(e)}")
        print(f"{op}: {type(e).__name__}: {str(e).strip()}", file=sys.stderr, flush=True)
        if recover is not None:
            recover()


async def astep(op, fn, recover=None):
    try:
        emit(op, show(await fn()))
    except Exception as e:
        emit(op, f"ERROR {sqlstate(e)}")
        print(f"{op}: {type(e).__name__}: {str(e).strip()}", file=sys.stderr, flush=True)
        if recover is not None:
            await recover()


def caught(fn):
    """The SQLSTATE an operation that is expected to fail failed with, as a result."""
    try:
        return f"no error: {show(fn())}"
    except Exception as e:
        return f"caught {sqlstate(e)}"


async def acaught(fn):
    try:
        return f"no error: {show(await fn())}"
    except Exception as e:
        return f"caught {sqlstate(e)}"


def settled(fn):
    """fn wrapped so that a failure becomes its `ERROR <SQLSTATE>` value: every task of a
    concurrent operation runs to its end and reports."""
    def wrapper(*args):
        try:
            return fn(*args)
        except Exception as e:
            return f"ERROR {sqlstate(e)}"
    return wrapper


def cancel_after(seconds, cancel, fn):
    """Runs fn while a timer calls cancel() after `seconds` (a CancelRequest from another thread)."""
    timer = threading.Timer(seconds, cancel)
    timer.start()
    try:
        return caught(fn)
    finally:
        timer.cancel()


SLOW_SCATTER = (
    "select count(*) from accounts"
    " where length(regexp_replace(repeat(owner, 200000), '[0-9]', 'x', 'g')) > 0"
)

__all__ = [
    "URL", "DDL", "FINAL", "seed_account", "seed_entry", "account", "meta", "emit", "show", "sqlstate",
    "step", "astep", "caught", "acaught", "settled", "cancel_after", "SLOW_SCATTER", "time",
]
