"""Downloads: the CSV response every page and the API send, and its Content-Disposition,
safe for any file name.

Names come from users (run names, collection slugs): a CR/LF would make the header invalid
(Django refuses it with BadHeaderError, a 500) and a quote or semicolon would add header
parameters.  The header carries an ASCII ``filename`` made of safe characters only and the
exact name in RFC 5987 ``filename*`` (UTF-8, percent-encoded), which browsers prefer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import quote

from django.http import HttpResponse, StreamingHttpResponse

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_UNSAFE_ASCII = re.compile(r"[^A-Za-z0-9._+-]+")


def content_disposition(filename: str, *, attachment: bool = True) -> str:
    """``attachment; filename="..."; filename*=UTF-8''...`` for ``filename``."""
    name = _CONTROL.sub("", filename).replace("/", "_").replace("\\", "_").strip() or "download"
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    ascii_name = _UNSAFE_ASCII.sub("_", ascii_name).strip("._") or "download"
    kind = "attachment" if attachment else "inline"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"


def csv_download(
    content: str | Iterable[str], filename: str, *, streaming: bool = False
) -> HttpResponse | StreamingHttpResponse:
    """The CSV download ``filename`` of ``content``, the text (or, with ``streaming``, an
    iterable of its pieces: a big file sent as it is made)."""
    cls = StreamingHttpResponse if streaming else HttpResponse
    response = cls(content, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition(filename)
    return response
