from pathlib import Path

import pytest

# trec_eval's own test data, kept in the repository (tests/data/trec_eval/SOURCE.md)
TREC_EVAL = Path(__file__).resolve().parents[1] / "data" / "trec_eval"


@pytest.fixture(scope="session")
def trec_data() -> Path:
    if not TREC_EVAL.is_dir():
        pytest.fail(f"trec_eval test data not found at {TREC_EVAL}")
    return TREC_EVAL
