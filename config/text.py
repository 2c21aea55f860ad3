"""What text a request or an archive may hold."""

from __future__ import annotations

import re

# Tab, newline and carriage return are text (a textarea sends CRLF); every other C0 control
# character and DEL is not (and PostgreSQL cannot store NUL at all).  Refused in form fields
# (config.middleware); files and archives refuse the same set, defined again in the engine
# (evaluation.metrics.text_rules.CONTROL_CHARACTERS: config may not import an app, the engine
# no Django), and tests/test_control_characters_in_files.py checks the two agree.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
