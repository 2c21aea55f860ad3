"""Uploaded files larger than FILE_UPLOAD_MAX_MEMORY_SIZE are spooled to a directory of
their own (``settings.FILE_UPLOAD_TEMP_DIR``).  A spooled file is deleted when its request
ends, but not when the worker is killed in the middle.  Each spooled file is named after
the host and process writing it, so what a dead process left behind is recognised and
deleted: at start-up (config/wsgi.py, which every new worker runs) and before each spooled
upload.  Files of other hosts sharing the directory are deleted only once stale."""

from __future__ import annotations

import os
import re
import socket
import tempfile
import time
from pathlib import Path

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

# the refusal of a file too large, by what the limit is for (whole sentences: the word
# order differs between languages)
TOO_LARGE = {
    "runs": _("The file is %(size)s MB; runs may be at most %(limit)s MB."),
    "imports": _("The file is %(size)s MB; imports may be at most %(limit)s MB."),
    "archives": _("The file is %(size)s MB; archives may be at most %(limit)s MB."),
}


def check_upload_size(f: UploadedFile, max_mb: int, what: str) -> UploadedFile:
    """Return ``f`` if it is at most ``max_mb`` MB; otherwise raise a ValidationError saying
    its size and the limit (``what``: "imports", "runs", "archives" -- what the limit is
    for, a key of ``TOO_LARGE``).  Every form with a file field checks its size here."""
    if f.size > max_mb * 1024 * 1024:
        message = TOO_LARGE.get(what) or gettext(
            "The file is %(size)s MB; %(what)s may be at most %(limit)s MB."
        )
        raise forms.ValidationError(
            str(message) % {"size": f"{f.size / 1048576:.1f}", "limit": max_mb, "what": what}
        )
    return f


# a file untouched this long belongs to no running upload (an upload writes continuously)
STALE_SECONDS = 60 * 60
_HOST = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:60] or "host"
_NAME = re.compile(r"(?P<host>[A-Za-z0-9._-]+)~(?P<pid>\d+)~")


def _prefix() -> str:
    return f"{_HOST}~{os.getpid()}~"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_upload_dir(max_age: float = STALE_SECONDS) -> int:
    """Create the upload directory if needed and delete the files of dead processes of this
    host and any file older than ``max_age`` seconds; return how many were deleted."""
    folder = Path(settings.FILE_UPLOAD_TEMP_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    cutoff = time.time() - max_age
    removed = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                m = _NAME.match(entry.name)
                dead = bool(m and m["host"] == _HOST and not _alive(int(m["pid"])))
                if dead or entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
            except FileNotFoundError:
                pass  # removed by another worker meanwhile
    return removed


class _SpooledUpload(TemporaryUploadedFile):
    """Django's TemporaryUploadedFile, its file name starting with host and process id."""

    def __init__(self, name, content_type, size, charset, content_type_extra=None):
        _, ext = os.path.splitext(name)
        file = tempfile.NamedTemporaryFile(
            prefix=_prefix(), suffix=".upload" + ext[:20], dir=settings.FILE_UPLOAD_TEMP_DIR
        )
        UploadedFile.__init__(self, file, name, content_type, size, charset, content_type_extra)


class CleaningTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """Spools to disk like Django's handler, after deleting what dead workers left."""

    def new_file(self, *args, **kwargs):
        clean_upload_dir()
        super(TemporaryFileUploadHandler, self).new_file(*args, **kwargs)
        self.file = _SpooledUpload(
            self.file_name, self.content_type, 0, self.charset, self.content_type_extra
        )
