"""CSV downloads: a configuration preamble pandas can skip, and formula-safe cells."""

from __future__ import annotations

from collections.abc import Iterable

from django.http import HttpRequest, HttpResponse

from config.downloads import csv_download
from evaluation.metrics.csvio import READABLE_FLOAT_FORMAT, write_csv


def csv_precision(request: HttpRequest) -> str:
    """``full`` when the query string asks for ``precision=full``, else ``readable``."""
    return "full" if request.GET.get("precision") == "full" else "readable"


def csv_response(
    filename: str,
    preamble: dict[str, object],
    header: list[str],
    rows: Iterable[Iterable],
    *,
    precision: str = "readable",
) -> HttpResponse:
    """A CSV download: ``# key=value`` lines first (read it back with
    ``pandas.read_csv(path, comment="#")``), then the header and rows, written by the
    product's one CSV writer (quoting and formula rule: ``evaluation.metrics.csvio``);
    floats with 6 decimals, NaN empty.  ``precision="full"`` writes every float as
    ``repr`` (the shortest text that reads back to the same double, as ``qa-score
    --precision full`` writes them; the writer's own float cell, no second formatter) and
    says so in the preamble (``# precision=full``)."""
    full = precision == "full"
    text = write_csv(
        header,
        rows,
        {**preamble, "precision": "full"} if full else preamble,
        float_format=None if full else READABLE_FLOAT_FORMAT,
    )
    return csv_download(text, filename)
