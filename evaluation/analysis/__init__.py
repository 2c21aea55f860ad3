"""Beside the engine: what scores are computed with (``score_config``), paired tests and
rank correlations (``stats``), intervals and all-pairs tests (``significance``), the
difference plot's geometry (``plots``).  Pure numpy/pandas/scipy on the engine's
outputs: no Django, no app module (an import-linter contract in pyproject.toml), so the
ORM modules call it, never the reverse."""
