"""CSV exports: a configuration preamble pandas can skip, and formula-safe cells."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable

from django.http import HttpResponse

from config.downloads import content_disposition

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """Neutralise spreadsheet formulas in text cells (a leading quote); numbers pass."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6f}"
    return value


def csv_response(filename: str, preamble: dict[str, object], header: list[str],
                 rows: Iterable[Iterable]) -> HttpResponse:
    """A CSV download: ``# key=value`` lines first (read it back with
    ``pandas.read_csv(path, comment="#")``), then the header and rows."""
    out = io.StringIO()
    for key, value in preamble.items():
        out.write(f"# {key}={str(value).replace(chr(10), ' ')}\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow([safe_cell(h) for h in header])
    for row in rows:
        w.writerow([safe_cell(v) for v in row])
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition(filename)
    return response
