"""Set-based writes of an import's large tables (strings, spelling keys, events, layer
judgments, run answers): plain tuples, never a model instance per row, in a few
statements on the open transaction -- PostgreSQL ``COPY ... FROM STDIN``, SQLite one
prepared ``INSERT`` run for every row -- and database ids reserved from the table's own
sequence beforehand when the rows need to be named (``reserve_ids``).

They bypass the ORM's ``save``, signals and cascades: the tables written here have none to
run, and their callers give every column a value (``auto_now_add`` fields included).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice

from django.db import DatabaseError, connection, models, transaction

# rows per COPY statement (each statement well within the statement timeout) or per
# executemany
BATCH = 10_000


def reserve_ids(model: type[models.Model], n: int) -> list[int]:
    """``n`` new ids of ``model``'s table, ascending, that no other row will take: from
    the table's sequence on PostgreSQL; on SQLite (one writer at a time: the caller's
    transaction has written already, so it holds the lock) above the highest id the table
    has had, which ``sqlite_sequence`` then remembers."""
    if n <= 0:
        return []
    table = model._meta.db_table
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                [connection.ops.quote_name(table), n],
            )
            return sorted(row[0] for row in cur.fetchall())
        cur.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        row = cur.fetchone()
        seq = row[0] if row else 0
        cur.execute(f"SELECT MAX(id) FROM {connection.ops.quote_name(table)}")
        start = max(seq or 0, cur.fetchone()[0] or 0) + 1
        last = start + n - 1
        if row:
            cur.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [last, table])
        else:
            cur.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, last])
    return list(range(start, last + 1))


def _converters(model: type[models.Model], columns: Sequence[str]) -> list[Callable | None]:
    """How each column's Python value is written (None: as it is)."""
    out: list[Callable | None] = []
    for name in columns:
        field = model._meta.get_field(name)
        kind = field.get_internal_type()
        if kind == "JSONField":
            out.append(lambda v, enc=field.encoder: None if v is None else json.dumps(v, cls=enc))
        elif kind == "DateTimeField" and connection.vendor != "postgresql":
            out.append(connection.ops.adapt_datetimefield_value)
        else:
            out.append(None)
    return out


def insert_rows(
    model: type[models.Model],
    columns: Sequence[str],
    rows: Iterable[tuple],
    *,
    written: Callable[[int], None] | None = None,
) -> int:
    """Insert ``rows`` (tuples in the order of ``columns``, model field names) into
    ``model``'s table; ``written(n)`` after each batch.  Returns the number of rows."""
    meta = model._meta
    names = [meta.get_field(c).column for c in columns]
    table = connection.ops.quote_name(meta.db_table)
    cols = ", ".join(connection.ops.quote_name(c) for c in names)
    convert = _converters(model, columns)
    if any(convert):
        rows = (
            tuple(v if f is None else f(v) for v, f in zip(row, convert, strict=True))
            for row in rows
        )
    it, total = iter(rows), 0
    with connection.cursor() as cur:
        while batch := list(islice(it, BATCH)):
            if connection.vendor == "postgresql":
                # the driver's own cursor: its errors become Django's (IntegrityError...)
                with (
                    connection.wrap_database_errors,
                    cur.cursor.copy(f"COPY {table} ({cols}) FROM STDIN") as copy,
                ):
                    for row in batch:
                        copy.write_row(row)
            else:
                marks = ", ".join(["%s"] * len(columns))
                cur.executemany(f"INSERT INTO {table} ({cols}) VALUES ({marks})", batch)
            total += len(batch)
            if written:
                written(total)
    return total


@contextmanager
def triggers_paused() -> Iterator[bool]:
    """Rows written in the block fire no trigger -- on PostgreSQL, when the database role
    may set ``session_replication_role`` (a superuser, or a role granted ``SET ON
    PARAMETER session_replication_role``, PostgreSQL 15+); yields whether they were
    paused (False on SQLite and for any other role: the block runs as usual).

    The only triggers of these tables are their foreign keys' checks, each queued per row
    until the commit: 2 million run answers are 4 million single-row look-ups there (most
    of the commit of a size-M import).  A caller that pauses them checks the keys itself,
    set-based, before the block's rows are relied upon.  Unique constraints and indexes
    are not triggers: they still hold.  The setting is the transaction's (``SET LOCAL``):
    put back on leaving the block, and by a rollback on an error."""
    paused = False
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        with connection.cursor() as cur:
            cur.execute("SHOW session_replication_role")
            before = cur.fetchone()[0]
            try:
                with transaction.atomic():  # a savepoint: a refused SET spoils nothing
                    cur.execute("SET LOCAL session_replication_role = replica")
                paused = True
            except DatabaseError:
                pass
    if not paused:
        yield False
        return
    yield True
    with connection.cursor() as cur:
        cur.execute("SELECT set_config('session_replication_role', %s, true)", [before])
