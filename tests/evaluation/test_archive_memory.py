"""Red team (issue 27): an archive under ARCHIVE_MAX_MB stays within its memory budget
(members read as streams, rows bounded by ARCHIVE_MAX_ROWS and the JSON members by
ARCHIVE_JSON_MAX_MB), and JSON nested deeper than the format needs is refused with its
member named, never a RecursionError."""

import io
import tracemalloc
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.models import Collection
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import
from evaluation.metrics import InputError
from evaluation.models import RunAnswer
from tests.evaluation.test_archive import rewrite

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_CELL = "[" * 5_000 + "]" * 5_000  # within the CSV reader's field limit

NESTED = {
    "an event": (
        dict(events_jsonl=lambda t: DEEP + "\n" + t),
        "bad.zip:events.jsonl:1: JSON nested more than 8 deep; the format needs no more",
    ),
    "the manifest": (
        dict(manifest_json=lambda t: DEEP),
        "bad.zip:manifest.json: JSON nested more than 8 deep",
    ),
    "the runs": (dict(runs_json=lambda t: DEEP), "bad.zip:runs.json: JSON nested more than 8 deep"),
    "a string's variants": (
        dict(strings_csv=lambda t: t.replace(",,john lennon,", f",{DEEP_CELL},john lennon,", 1)),
        "is not a JSON list of strings",
    ),
}


@pytest.mark.parametrize("case", NESTED, ids=list(NESTED))
def test_deeply_nested_json_is_refused_with_its_member_named(demo, case):
    changes, message = NESTED[case]
    data = rewrite(collection_export(collection=demo), **changes)
    with pytest.raises(InputError) as refused:
        collection_import(data=data, slug="deep", filename="bad.zip")
    assert message in str(refused.value), str(refused.value)
    assert not Collection.objects.filter(slug="deep").exists()


def test_the_command_refuses_deep_json_without_a_traceback(demo, tmp_path):
    path = tmp_path / "deep.zip"
    path.write_bytes(
        rewrite(collection_export(collection=demo), events_jsonl=lambda t: DEEP + "\n" + t)
    )
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command(
            "import_collection", str(path), "--slug", "deep", stdout=io.StringIO(), stderr=err
        )
    assert "deep.zip:events.jsonl:1: JSON nested more than 8 deep" in err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_the_format_nests_no_deeper_than_the_limit(demo):
    """The limit refuses nothing an export writes (the demo's audit trail has snapshots
    with variants, layers' rows and undos)."""
    copy = collection_import(data=collection_export(collection=demo), slug="copy")
    assert copy.questions.count() == demo.questions.count()


def test_more_rows_than_the_budget_are_refused(demo, settings):
    data = collection_export(collection=demo)
    settings.ARCHIVE_MAX_ROWS = 10
    with pytest.raises(InputError, match=r"more than 10 rows, CSV rows and events together"):
        collection_import(data=data, slug="many")
    settings.ARCHIVE_MAX_ROWS = 1_000_000
    settings.ARCHIVE_JSON_MAX_MB = 1
    padded = rewrite(data, runs_json=lambda t: t + " " * (2 * 1024 * 1024))
    with pytest.raises(InputError, match=r"together larger than 1 MB .*ARCHIVE_JSON_MAX_MB"):
        collection_import(data=padded, slug="padded")
    assert not Collection.objects.filter(slug__in=["many", "padded"]).exists()


def with_answers(data: bytes, lines) -> bytes:
    """The archive with run_answers.csv written from ``lines`` (a stream: never whole)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in src.namelist():
            if name != "run_answers.csv":
                z.writestr(name, src.read(name))
        with z.open("run_answers.csv", "w") as f:
            f.write(b"run,question_id,rank,answer,key,score\n")
            for chunk in lines:
                f.write(chunk.encode())
    return buf.getvalue()


def peak_bytes(call) -> int:
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_hostile_archive_is_refused_within_the_budget_not_its_size(demo, settings):
    """The red team's bomb scaled down: 48 MB of one repeated row in a zip of some 100 KB.
    The run answers stream into the database, never held: the second row's repeated rank
    stops the write, and the member is read again until a thousand problems are listed;
    memory stays within 25 MB, not the 48 MB the archive unpacks to."""
    line = "AF,EX1-BEATLES,1,the beatles,the beatles,\n"
    data = with_answers(
        collection_export(collection=demo),
        (line * 10_000 for _ in range(48 * 2**20 // len(line) // 10_000)),
    )
    assert len(data) < 500_000

    def refused():
        with pytest.raises(InputError, match="rank 1 of 'AF' on 'EX1-BEATLES' appears twice"):
            collection_import(data=data, slug="bomb")

    peak = peak_bytes(refused)
    assert peak < 50_000 * 500
    assert not Collection.objects.filter(slug="bomb").exists()


def test_more_run_answers_than_their_budget_are_refused(demo, settings):
    """The run answers have their own budget (ARCHIVE_MAX_ANSWERS): the rows past it are
    not read."""
    settings.ARCHIVE_MAX_ANSWERS = 5_000
    lines = (f"AF,EX1-BEATLES,{r},answer {r},answer {r},\n" for r in range(1, 20_001))
    data = with_answers(collection_export(collection=demo), lines)
    with pytest.raises(InputError, match=r"run_answers.csv:5002: more than 5000 run answers"):
        collection_import(data=data, slug="many")
    assert not Collection.objects.filter(slug="many").exists()


def test_an_archive_within_the_budget_is_imported_within_it(demo, settings):
    """10,000 answers of one run (each of its own rank) are imported with at most 1,000
    bytes a row of the budget (model objects are written a batch at a time)."""
    settings.ARCHIVE_MAX_ROWS = 12_000
    n = 10_000
    lines = (f"AF,EX1-BEATLES,{r},answer {r},answer {r},\n" for r in range(1, n + 1))
    data = with_answers(collection_export(collection=demo), lines)
    peak = peak_bytes(lambda: collection_import(data=data, slug="many"))
    assert RunAnswer.objects.filter(run__collection__slug="many").count() == n
    assert peak < 12_000 * 1000
