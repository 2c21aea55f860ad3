"""CSV downloads: a configuration preamble pandas can skip, and formula-safe cells."""

from __future__ import annotations

from collections.abc import Iterable

from django.http import HttpResponse

from config.downloads import csv_download
from evaluation.metrics.csvio import write_csv


def csv_response(
    filename: str, preamble: dict[str, object], header: list[str], rows: Iterable[Iterable]
) -> HttpResponse:
    """A CSV download: ``# key=value`` lines first (read it back with
    ``pandas.read_csv(path, comment="#")``), then the header and rows, written by the
    product's one CSV writer (quoting and formula rule: ``evaluation.metrics.csvio``);
    floats with 6 decimals, NaN empty."""
    return csv_download(write_csv(header, rows, preamble, float_format=".6f"), filename)
