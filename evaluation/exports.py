"""CSV downloads: a configuration preamble pandas can skip, and formula-safe cells."""

from __future__ import annotations

from collections.abc import Iterable

from django.http import HttpResponse

from config.downloads import content_disposition
from evaluation.metrics.csvio import write_csv


def csv_response(
    filename: str, preamble: dict[str, object], header: list[str], rows: Iterable[Iterable]
) -> HttpResponse:
    """A CSV download: ``# key=value`` lines first (read it back with
    ``pandas.read_csv(path, comment="#")``), then the header and rows, written by the
    product's one CSV writer (quoting and formula rule: ``evaluation.metrics.csvio``);
    floats with 6 decimals, NaN empty."""
    text = write_csv(header, rows, preamble, float_format=".6f")
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition(filename)
    return response
