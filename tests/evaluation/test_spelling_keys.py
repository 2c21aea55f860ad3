"""Every spelling of a judged string matches under the mode it was judged in and every later
one (issue 23 part 5, DESIGN.md section 4): "Richard Nixon." folded into "Richard Nixon"
under normalized matching is still credited after a switch to exact, and a collection
scores as ``qa-score --match <mode>`` scores its own export, and as a new collection of
that mode that imports the export."""

import csv
import io

import pytest

from annotate.exports import export_judgments
from annotate.imports import collection_import
from annotate.judging import string_judge
from annotate.models import AnswerString, Membership, Role
from annotate.workspace_selectors import question_workspace
from evaluation.analysis.score_config import ScoreConfig
from evaluation.metrics.cli import build_parser, score
from evaluation.models import Run
from evaluation.selectors import unjudged_answers, unjudged_counts
from evaluation.services import (
    collection_matching_mode_change,
    run_import,
    run_pool,
    score_runs,
)
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

HEADER = "question_id,synset_id,answer,level\n"
NIXON = HEADER + "Q1,gold,Richard Nixon,S\nQ1,gold,Richard Nixon.,S\n"
METRICS = ("q_measure", "r_measure", "rr", "ap", "ndcg", "rbp_trunc")


def _run_file(answers: dict[str, list[str]]) -> bytes:
    return "".join(
        f"{qid}\t{rank}\t{text}\n"
        for qid, texts in answers.items()
        for rank, text in enumerate(texts, start=1)
    ).encode()


def _upload(collection, owner, name, answers) -> Run:
    """``answers`` uploaded as run ``name`` by ``owner``, an organizer of ``collection``."""
    Membership.objects.get_or_create(
        collection=collection, user=owner, defaults={"role": Role.ORGANIZER}
    )
    return run_import(
        collection=collection, owner=owner, name=name, data=_run_file(answers), filename=name
    )


def _nixon(how: str):
    """A normalized collection whose string "Richard Nixon" holds "Richard Nixon." as a
    variant: folded by a judgments import, or by pooling (``spellings_fold``) and judged."""
    c = make_collection(slug=f"nixon-{how}")
    q = make_question(collection=c, qid="Q1", text="Which president resigned?")
    owner = make_user()
    if how == "import":
        collection_import(collection=c, kind="judgments", data=NIXON.encode(), filename="j.csv")
    else:
        pooled = _upload(c, owner, "pooled", {"Q1": ["Richard Nixon", "Richard Nixon."]})
        assert run_pool(run=pooled, by=owner) == 1
        s = AnswerString.objects.get(question=q)
        string_judge(question=q, string=s.pk, new_synset=True, level="S", by=owner)
    s = AnswerString.objects.get(question=q)
    assert (s.text, s.variants) == ("Richard Nixon", ["Richard Nixon."])
    return c, q, owner


@pytest.mark.parametrize("how", ["import", "pool"])
def test_a_folded_spelling_is_still_credited_after_switching_to_exact(how):
    c, q, owner = _nixon(how)
    before = _upload(c, owner, "before", {"Q1": ["Richard Nixon."]})
    collection_matching_mode_change(collection=c, mode="exact", by=owner)
    after = _upload(c, owner, "after", {"Q1": ["Richard Nixon."]})
    scores = score_runs(c, [before, after], ScoreConfig(metrics=("rr", "q_measure")))
    for run in ("before", "after"):
        assert scores.per_question[run].loc["Q1", "rr"] == 1.0
        assert scores.per_question[run].loc["Q1", "q_measure"] == 1.0
    assert list(scores.unjudged()[:, 0]) == [0, 0]
    # the pool does not list it as unjudged, and pooling it adds nothing
    assert unjudged_answers(after) == []
    assert unjudged_counts([before, after]) == {}
    assert run_pool(run=after, by=owner) == 0
    assert AnswerString.objects.filter(question=q).count() == 1
    # the judging workspace counts the runs that answered it in either spelling
    workspace = question_workspace(q)
    (string,) = [s for syn in workspace.synsets for s in syn.members]
    assert string.freq == Run.objects.filter(collection=c).count()


def test_a_spelling_keyed_apart_stays_with_its_string_when_typed_again():
    c, q, owner = _nixon("import")
    collection_matching_mode_change(collection=c, mode="exact", by=owner)
    from annotate.edits import Conflict
    from annotate.judging import string_add

    with pytest.raises(Conflict, match="already has the same matching key"):
        string_add(question=q, text="Richard Nixon.", by=owner)


# -- export -> re-import gives the same scores in every mode --------------------------------
STUDY = (
    HEADER
    + "Q1,gold,Richard Nixon,S\n"
    + "Q1,gold,Richard Nixon.,S\n"
    + "Q1,gold,richard nixon,S\n"
    + "Q1,Q1-b,Nixon,A\n"
    + "Q1,,Gerald Ford,\n"
    + "Q1,,gerald ford.,\n"
    + "Q2,Q2-a,The Beatles,S\n"
    + "Q2,Q2-a,Beatles,S\n"
    + "Q2,Q2-b,John Lennon,A\n"
    + "Q2,,The Rolling Stones!,\n"
    + "Q3,nil,NIL,S\n"
)
RUNS = {
    "r1": {
        "Q1": ["Richard Nixon.", "Nixon", "gerald ford"],
        "Q2": ["beatles", "John Lennon"],
        "Q3": ["NIL"],
    },
    "r2": {
        "Q1": ["RICHARD NIXON", "richard nixon", "Richard Nixon"],
        "Q2": ["the beatles.", "The Rolling Stones"],
        "Q3": ["nobody"],
    },
    "r3": {"Q1": ["Gerald Ford", "Richard Nixon"], "Q2": ["Beatles", "The Beatles"]},
}


def _collection(slug: str, mode: str = "normalized"):
    c = make_collection(slug=slug, matching_mode=mode)
    for qid in ("Q1", "Q2", "Q3"):
        make_question(collection=c, qid=qid)
    return c


def _page_scores(collection, owner) -> dict:
    """{(run, question or "all"): (metric values..., unjudged)} as the pages score it."""
    runs = list(Run.objects.filter(collection=collection).order_by("name"))
    if not runs:
        runs = [_upload(collection, owner, name, answers) for name, answers in RUNS.items()]
    scores = score_runs(collection, runs, ScoreConfig(metrics=METRICS))
    unjudged = scores.unjudged()
    out = {}
    for i, run in enumerate(scores.runs):
        frame = scores.per_question[run]
        for j, qid in enumerate(scores.questions):
            out[(run, qid)] = (*(float(frame.loc[qid, m]) for m in METRICS), int(unjudged[i, j]))
    return out


def _qa_score(export: str, mode: str, tmp_path) -> dict:
    """The same, from ``qa-score --match mode`` on the export."""
    j = tmp_path / f"export-{mode}.csv"
    j.write_text(export, encoding="utf-8")
    files = []
    for name, answers in RUNS.items():
        f = tmp_path / name
        f.write_bytes(_run_file(answers))
        files.append(str(f))
    opts = vars(
        build_parser().parse_args(
            [
                "--judgments",
                str(j),
                *files,
                "--match",
                mode,
                "--metrics",
                ",".join(METRICS),
                "--format",
                "csv",
                "--precision",
                "full",
            ]
        )
    )
    out, err = io.StringIO(), io.StringIO()
    score(opts, out, err)
    return {
        (row["run"], row["question_id"]): (*(float(row[m]) for m in METRICS), int(row["unjudged"]))
        for row in csv.DictReader(io.StringIO(out.getvalue()))
        if row["question_id"] != "all"
    }


def _round_trip(source, mode: str, owner, tmp_path) -> dict:
    """Export ``source`` (now in ``mode``), re-import it into a new collection of ``mode``
    with the same runs: the three scorings agree; returns the source's."""
    export = export_judgments(source)
    fresh = _collection(f"fresh-{source.slug}-{mode}", mode)
    collection_import(collection=fresh, kind="judgments", data=export.encode(), filename="e.csv")
    mine = _page_scores(source, owner)
    assert mine == _page_scores(fresh, owner), mode
    assert mine == _qa_score(export, mode, tmp_path), mode
    return mine


@pytest.mark.parametrize("mode", ["exact", "normalized", "squad"])
def test_export_reimport_and_qa_score_agree_after_a_switch_to(mode, tmp_path):
    source = _collection(f"src-{mode}")
    collection_import(collection=source, kind="judgments", data=STUDY.encode(), filename="j.csv")
    owner = make_user()
    _page_scores(source, owner)  # runs uploaded under normalized matching
    if mode != "normalized":
        collection_matching_mode_change(collection=source, mode=mode, by=owner)
    mine = _round_trip(source, mode, owner, tmp_path)
    # "Richard Nixon." folded under normalized matching is credited in every mode
    assert mine[("r1", "Q1")][METRICS.index("rr")] == 1.0


def test_switching_back_and_forth_scores_as_the_export_under_the_current_mode(tmp_path):
    source = _collection("src-cycle")
    collection_import(collection=source, kind="judgments", data=STUDY.encode(), filename="j.csv")
    owner = make_user()
    first = _page_scores(source, owner)
    for mode in ("exact", "squad", "normalized"):
        collection_matching_mode_change(collection=source, mode=mode, by=owner)
        _round_trip(source, mode, owner, tmp_path)
    # back under normalized matching, every spelling still matches as it did at first
    assert _page_scores(source, owner) == first


def test_an_archive_keeps_the_spellings_and_the_scores_after_a_switch():
    from annotate.spellings import spelling_keys_drift
    from evaluation.archive.exporting import collection_export
    from evaluation.archive.importing import collection_import as archive_import

    source = _collection("src-archive")
    collection_import(collection=source, kind="judgments", data=STUDY.encode(), filename="j.csv")
    owner = make_user()
    _page_scores(source, owner)
    collection_matching_mode_change(collection=source, mode="exact", by=owner)
    copy = archive_import(data=collection_export(collection=source), slug="copy-archive")
    assert copy.matching_mode == "exact" and spelling_keys_drift(copy) == []
    assert _page_scores(copy, owner) == _page_scores(source, owner)


def test_an_archive_whose_strings_share_a_key_by_a_spelling_is_refused():
    import json
    import zipfile

    from evaluation.archive.exporting import collection_export
    from evaluation.archive.format import read_member_csv
    from evaluation.archive.importing import collection_import as archive_import
    from evaluation.metrics import InputError
    from evaluation.metrics.csvio import write_csv

    c, _q, _owner = _nixon("import")
    collection_matching_mode_change(collection=c, mode="exact", by=None)
    make_question(collection=c, qid="Q2")
    data = collection_export(collection=c)
    src = zipfile.ZipFile(io.BytesIO(data))
    header, rows = read_member_csv(src.read("strings.csv").decode())
    extra = dict(rows[0])
    extra.update(id="99", answer="Richard Nixon.", key="Richard Nixon.", variants="[]")
    extra.update(synset_id="", level="", judged_at="", judged_by="", source="pool")
    rows = [[row[h] for h in header] for row in [*rows, extra]]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in src.namelist():
            body = src.read(name).decode()
            z.writestr(name, write_csv(header, rows) if name == "strings.csv" else body)
    with pytest.raises(InputError) as info:
        archive_import(data=buf.getvalue(), slug="clash")
    assert "two strings never share a key" in str(info.value.format(limit=None))
    assert json.loads(src.read("manifest.json"))["collection"]["matching_mode"] == "exact"
