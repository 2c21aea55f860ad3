"""Set-based bulk writes for the apps' large imports and re-keyings (issue 24).

Django's ``bulk_create`` builds a model instance per row and ``bulk_update`` a
``CASE WHEN id = ... THEN ...`` per row, which at 100,000 rows costs minutes of Python.
These helpers take plain tuples instead and write them in a few statements on the
connection's open transaction:

- ``insert_rows``: PostgreSQL ``COPY ... FROM STDIN`` (the ids, when asked for, reserved
  from the table's sequence first); SQLite one prepared ``INSERT`` run for every row.
- ``temp_rows``: the rows in a temporary table (COPY on PostgreSQL), for one
  ``UPDATE ... FROM`` or ``DELETE ... WHERE ... IN`` joined to it; dropped on the way out.
- ``update_rows``: set columns of rows by primary key, one ``UPDATE ... FROM`` a temporary
  table (SQLite 3.33+ has ``UPDATE ... FROM`` too).
- ``delete_rows``: ``DELETE`` of the rows whose column is one of a list of values.

They bypass the ORM's signals and cascades: callers use them on tables that have none
to run (every caller names its tables).  Columns a caller leaves out get the field's
default (``auto_now`` and ``auto_now_add`` fields: now).
"""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, models, transaction
from django.db.models.expressions import RawSQL
from django.utils import timezone

# internal types whose Python values both drivers take as they are
_PLAIN = {
    "AutoField",
    "BigAutoField",
    "BigIntegerField",
    "BooleanField",
    "CharField",
    "FloatField",
    "ForeignKey",
    "IntegerField",
    "PositiveIntegerField",
    "PositiveSmallIntegerField",
    "SlugField",
    "SmallIntegerField",
    "TextField",
}
_names = itertools.count(1)

# what a long write reports its progress to (a background job's progress bar): done so far,
# the total when known, and the unit ("lines", "questions")
Progress = Callable[[int, int | None, str], None]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a bulk write (a context manager and a
    decorator).  Such a write holds hundreds of thousands of small containers (the rows,
    their tuples and lists) until it ends, none of them in a cycle, and the collector
    walks them again at every collection of the oldest generation: a quarter of the CPU
    time of pooling 100 runs (bench/bulk_bench.py).  Whatever cycles the write leaves are
    collected once it is over."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _field(model: type[models.Model], name: str) -> models.Field:
    if name == "pk":
        return model._meta.pk
    for f in model._meta.concrete_fields:
        if name in (f.name, f.attname):
            return f
    raise ValueError(f"{model.__name__} has no column field {name!r}")


def _converter(field: models.Field) -> Callable[[Any], Any] | None:
    """How a value of ``field`` is written: None when the driver takes it as it is."""
    kind = field.get_internal_type()
    if kind in _PLAIN:
        return None
    if connection.vendor == "postgresql":
        if kind == "DateTimeField":
            return None  # psycopg writes an aware datetime as timestamptz
        if kind == "JSONField":
            # COPY's text format: the server parses the JSON text into the jsonb column
            encoder = field.encoder
            return lambda v: None if v is None else "[]" if v == [] else json.dumps(v, cls=encoder)
    memo: dict[Any, Any] = {}

    def convert(v: Any) -> Any:
        try:
            return memo[v]  # a value written on every row (the import's time stamp)
        except KeyError:
            memo[v] = out = field.get_db_prep_save(v, connection)
        except TypeError:  # unhashable: a list of a JSONField
            return field.get_db_prep_save(v, connection)
        return out

    return convert


def _converted(rows: Iterable[Sequence], fields: Sequence[models.Field]) -> Iterable[Sequence]:
    """``rows`` with the values of ``fields`` that need it converted for the driver."""
    conv = [(i, c) for i, f in enumerate(fields) if (c := _converter(f)) is not None]
    if not conv:
        return rows

    def converted(row: Sequence) -> list:
        row = list(row)
        for i, c in conv:
            row[i] = c(row[i])
        return row

    return map(converted, rows)


def _int_array(values: Iterable[int]) -> str:
    """A PostgreSQL array literal of integers (one parameter, where a list would be one
    placeholder per value for the driver to fill in, in Python)."""
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def ids_in(ids: Iterable[int]) -> RawSQL | list[int]:
    """The right-hand side of a ``pk__in`` (or ``question_id__in``) filter on many ids:
    on PostgreSQL one array parameter (``IN (SELECT unnest(%s::bigint[]))``) rather than
    a placeholder per id, each of which Django and the driver handle in Python."""
    ids = list(ids)
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", [_int_array(ids)])
    return ids


def _qn(name: str) -> str:
    return connection.ops.quote_name(name)


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence], *, ids: bool = False
) -> list[int]:
    """Insert ``rows`` (tuples of the values of ``fields``, model field names or
    attnames such as ``question_id``) into ``model``'s table.  The other columns get their
    field's default.  With ``ids``, returns the new rows' primary keys in row order
    (ascending, as ``bulk_create`` gives them); else an empty list."""
    rows = list(rows)
    if not rows:
        return []
    given = [_field(model, n) for n in fields]
    pk = model._meta.pk
    rest = [
        f
        for f in model._meta.concrete_fields
        if f is not pk and f not in given and f.attname not in fields
    ]
    now = timezone.now()
    fill = tuple(
        now
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
        # a callable default (``list``) is one value for every row: they are written, not kept
        else f.get_default()
        for f in rest
    )
    columns = given + rest
    values = (tuple(r) + fill for r in rows) if rest else rows
    table = model._meta.db_table
    out: list[int] = []
    with transaction.atomic(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            if ids:
                cur.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                    [table, pk.column, len(rows)],
                )
                out = sorted(r[0] for r in cur.fetchall())
                columns = [pk, *columns]
                values = ((i, *v) for i, v in zip(out, values, strict=True))
            names = ", ".join(_qn(f.column) for f in columns)
            with cur.cursor.copy(f"COPY {_qn(table)} ({names}) FROM STDIN") as copy:
                for row in _converted(values, columns):
                    copy.write_row(row)
        else:
            names = ", ".join(_qn(f.column) for f in columns)
            marks = ", ".join(["%s"] * len(columns))
            cur.executemany(
                f"INSERT INTO {_qn(table)} ({names}) VALUES ({marks})",
                list(_converted(values, columns)),
            )
            if ids:
                # SQLite's AUTOINCREMENT gives each new row one more than any id the table
                # ever had, and this transaction holds the database's one write lock: the
                # rows just written have the last len(rows) ids, in order
                cur.execute(f"SELECT max({_qn(pk.column)}) FROM {_qn(table)}")
                last = cur.fetchone()[0]
                out = list(range(last - len(rows) + 1, last + 1))
    return out


@contextmanager
def temp_rows(
    columns: Sequence[tuple[str, str]], rows: Iterable[Sequence], *, index: Sequence[str] = ()
) -> Iterator[str]:
    """A temporary table of ``rows`` with ``columns`` ((name, SQL type), types as the
    database names them: ``text``, ``bigint``), for the caller's set-based statements inside
    the ``with``; yields its (quoted) name.  It lives in a savepoint of its own: dropped on
    the way out, and rolled back with it when the ``with`` raises.  ``index`` names the
    columns the caller joins on: SQLite gets an index on them (PostgreSQL hashes the
    join)."""
    raw = f"bulk_tmp_{next(_names)}"
    name = _qn(raw)
    defs = ", ".join(f"{_qn(c)} {t}" for c, t in columns)
    with transaction.atomic(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(f"CREATE TEMPORARY TABLE {name} ({defs}) ON COMMIT DROP")
            with cur.cursor.copy(f"COPY {name} FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            # the planner's row counts for the join: a temporary table has no statistics
            # until analyzed, and the guess (thousands of rows) picks a sequential scan of
            # the table joined to one of a single row
            cur.execute(f"ANALYZE {name}")
        else:
            cur.execute(f"CREATE TEMPORARY TABLE {name} ({defs})")
            marks = ", ".join(["%s"] * len(columns))
            cur.executemany(f"INSERT INTO {name} VALUES ({marks})", [tuple(r) for r in rows])
            if index:
                cols = ", ".join(_qn(c) for c in index)
                cur.execute(f"CREATE INDEX {_qn(raw + '_index')} ON {name} ({cols})")
        yield name
        cur.execute(f"DROP TABLE {name}")


def _sql_type(field: models.Field) -> str:
    if connection.vendor == "postgresql":
        return field.db_type(connection)
    return "blob"  # SQLite keeps what it is given (type affinity of a blob: none)


def update_rows(model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence]) -> int:
    """Set ``fields`` of ``model``'s rows: ``rows`` are (pk, *values of fields)), in one
    ``UPDATE ... FROM`` a temporary table.  Returns the number of rows updated."""
    rows = list(rows)
    if not rows:
        return 0
    pk = model._meta.pk
    given = [_field(model, n) for n in fields]
    columns = [("pk", _sql_type(pk))] + [(f"v{i}", _sql_type(f)) for i, f in enumerate(given)]
    table = _qn(model._meta.db_table)
    sets = ", ".join(f"{_qn(f.column)} = b.{_qn(f'v{i}')}" for i, f in enumerate(given))
    values = _converted(rows, [pk, *given])
    with transaction.atomic(), temp_rows(columns, values, index=["pk"]) as tmp:
        with connection.cursor() as cur:
            cur.execute(
                f"UPDATE {table} SET {sets} FROM {tmp} AS b "
                f"WHERE {table}.{_qn(pk.column)} = b.{_qn('pk')}"
            )
            return cur.rowcount


def delete_rows(model: type[models.Model], field: str, values: Iterable[Any]) -> int:
    """``DELETE`` the rows of ``model`` whose ``field`` is one of ``values`` (no cascade
    runs: for tables nothing else refers to, or with ``ON DELETE`` left to the caller), in
    one statement whatever their number.  Returns the number of rows deleted."""
    values = list(values)
    if not values:
        return 0
    f = _field(model, field)
    column = _qn(f.column)
    table = _qn(model._meta.db_table)
    with transaction.atomic(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            ints = all(isinstance(v, int) for v in values)
            cur.execute(
                f"DELETE FROM {table} WHERE {column} = ANY(%s{'::bigint[]' if ints else ''})",
                [_int_array(values) if ints else values],
            )
            return cur.rowcount
        with temp_rows([("v", _sql_type(f))], ((v,) for v in values), index=["v"]) as tmp:
            cur.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT v FROM {tmp})")
            return cur.rowcount
