"""What text a request or an archive may hold."""

from __future__ import annotations

import re

# The one rule of what text may hold (evaluation.metrics.text_rules.CONTROL_CHARACTERS, where
# it is defined and explained), re-stated here because config may not import an app (nor
# the engine Django): every Unicode control character but tab, newline and carriage return
# (a textarea sends CRLF) -- C0, DEL and C1, U+0085 included -- the line and paragraph
# separators U+2028 and U+2029, and U+FEFF (a byte-order mark, which only a file may start
# with).  Refused in every form field, query parameter and field name
# (config.middleware.ControlCharacterMiddleware); tests/security/test_one_text_rule.py checks
# that the two sets are the same, code point by code point.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
