"""The optional C accelerator (``_fastparse``), loaded once for every module that uses it.

``fastparse`` is the module, or None when it was not built (no C compiler at install time)
or when the environment variable ``QASYNSET_NO_ACCEL`` is set to anything but ``""`` or
``0`` when this module is first imported; then the line readers (pure Python) and the
Python normalization do all the work (the test suite runs the scorer's tests both ways).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from types import ModuleType

from .sniff import detect_run_format

ENV_SWITCH = "QASYNSET_NO_ACCEL"

#: True when the accelerator was switched off by ``QASYNSET_NO_ACCEL``
switched_off = os.environ.get(ENV_SWITCH, "").strip() not in ("", "0")


def _load() -> ModuleType | None:
    if switched_off:
        return None
    try:
        from . import _fastparse  # optional: built only where a C compiler was at install
    except ImportError:  # no C compiler when installed: the line readers do the work
        return None
    return _fastparse


fastparse = _load()


def why_unused() -> str | None:
    """None when the accelerator is in use, else why not (for skip reasons and messages)."""
    if fastparse is not None:
        return None
    if switched_off:
        return f"the C accelerator is switched off ({ENV_SWITCH} is set)"
    return (
        "the C accelerator was not built (no C compiler at install time); the line readers are used"
    )


QRELS, TREC_RUN, QA_RUN = 0, 1, 2  # the kinds of file the C reader reads


class Reading:
    """The C reader at work on some files in a background thread (it releases the GIL,
    so it runs while the interpreter imports numpy and reads the judgments)."""

    def __init__(self, files: list[bytes], kinds: list[int]):
        self.files, self.kinds = files, kinds
        self._result = self._error = None
        self._thread = threading.Thread(target=self._run, name="qasynset-reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = fastparse.parse(self.files, self.kinds)
        except BaseException as e:  # raised again in the caller's thread
            self._error = e

    def result(self):
        """What ``fastparse.parse(files, kinds)`` returned (waits for it)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def start_reading(qrels: bytes | None, runs: Sequence[tuple[str, bytes | str]]) -> Reading | None:
    """Start the C reader on ``qrels`` (or None when the judgments are a CSV file) and the
    run files ``(filename, data)``; None when the accelerator is not in use."""
    if fastparse is None:
        return None
    files, kinds = ([_as_bytes(qrels)], [QRELS]) if qrels is not None else ([], [])
    for _filename, data in runs:
        raw = _as_bytes(data)
        files.append(raw)
        kinds.append(TREC_RUN if detect_run_format(raw[:65536]) == "trec" else QA_RUN)
    return Reading(files, kinds)


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)
