"""The Django program's models, on the same tables as every other program (db_table)."""

from django.db import models


class Currency(models.Model):
    code = models.TextField(primary_key=True)
    name = models.TextField()
    rate = models.DecimalField(max_digits=10, decimal_places=4)

    class Meta:
        app_label = "bank"
        db_table = "currencies"


class Account(models.Model):
    id = models.BigIntegerField(primary_key=True)
    owner = models.TextField()
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, db_column="currency")
    balance = models.DecimalField(max_digits=12, decimal_places=2)
    status = models.TextField(default="open")
    opened = models.DateField()

    class Meta:
        app_label = "bank"
        db_table = "accounts"


class Entry(models.Model):
    # Django wants one primary key column; the shard key is account_id (sharded, colocated). In the
    # database the key is (account_id, id), as on every other program's table and as a sharded
    # table's uniqueness must include its shard key: the program creates it with SQL.
    id = models.BigIntegerField(primary_key=True)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="entries")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    note = models.TextField(null=True)

    class Meta:
        app_label = "bank"
        db_table = "entries"


class Audit(models.Model):
    id = models.BigIntegerField(primary_key=True)
    account_id = models.BigIntegerField(null=True)
    action = models.TextField()

    class Meta:
        app_label = "bank"
        db_table = "audit"
