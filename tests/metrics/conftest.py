from pathlib import Path

import pytest

TREC_EVAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec_eval"


@pytest.fixture(scope="session")
def trec_data() -> Path:
    if not TREC_EVAL.is_dir():
        pytest.fail(f"trec_eval test data not found at {TREC_EVAL} (../shared beside the repo)")
    return TREC_EVAL
