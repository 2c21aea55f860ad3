"""The optional C accelerator (``_fastparse``), loaded once for every module that uses it.

``fastparse`` is the module, or None when it was not built (no C compiler at install time)
or when the environment variable ``QASYNSET_NO_ACCEL`` is set to anything but ``""`` or
``0`` when this module is first imported; then the line readers (pure Python) and the
Python normalization do all the work (the test suite runs the scorer's tests both ways).
"""

from __future__ import annotations

import os
from types import ModuleType

ENV_SWITCH = "QASYNSET_NO_ACCEL"

#: True when the accelerator was switched off by ``QASYNSET_NO_ACCEL``
switched_off = os.environ.get(ENV_SWITCH, "").strip() not in ("", "0")


def _load() -> ModuleType | None:
    if switched_off:
        return None
    try:
        from . import _fastparse
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
