"""export_collection / import_collection: a round trip gives identical judgments, events
(synset labels and string variants too) and scores for every run; undo works in the
imported collection and never reaches outside it; a bad archive (or a crafted one) is
refused with every problem named and writes nothing; version 1 archives are still read."""

import io
import json
import re
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate import edits, judging
from annotate.models import AnswerString, AnswerSynset, Collection, JudgmentEvent, Question
from evaluation import services
from evaluation.analysis import score_config
from evaluation.archive.exporting import collection_export
from evaluation.archive.format import read_member_csv
from evaluation.archive.importing import collection_import
from evaluation.metrics import BASE_METRICS, InputError
from evaluation.metrics.csvio import write_csv
from evaluation.models import Run, RunAnswer
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def judgments(c: Collection):
    return sorted(
        AnswerString.objects.filter(question__collection=c).values_list(
            "question__qid",
            "synset__ordinal",
            "synset__label",
            "text",
            "variants",
            "key",
            "level__code",
            "source",
            "judged_by__username",
            "judged_at",
        ),
        key=repr,
    )


def events(c: Collection):
    """The audit trail; snapshots (and pool_run's run) name rows by database ids, which an
    import renumbers (the re-export below shows they name the same rows)."""
    out = []
    for q, u, a, b, af, t in (
        JudgmentEvent.objects.filter(collection=c)
        .order_by("id")
        .values_list("question__qid", "user__username", "action", "before", "after", "created_at")
    ):
        if "strings" in af:
            b = af = None
        elif a == "pool_run":
            af = dict(af, run=Run.objects.get(pk=af["run"]).name)
        out.append((q, u, a, b, af, t))
    return out


def everything_else(c: Collection):
    return {
        "collection": (
            c.name,
            c.matching_mode,
            c.max_output_size,
            c.open_for_submissions,
            c.leaderboard_published,
        ),
        "levels": list(c.levels.values_list("code", "label", "gain", "order")),
        "members": sorted(c.memberships.values_list("user__username", "role")),
        "questions": list(
            c.questions.order_by("id").values_list("qid", "text", "status", "notes", "version")
        ),
        "assessors": sorted(c.questions.values_list("qid", "assessors__username"), key=repr),
        "events": events(c),
        "runs": sorted(
            c.runs.values_list("name", "owner__username", "sha256", "format", "uploaded_at")
        ),
        "answers": sorted(
            RunAnswer.objects.filter(run__collection=c).values_list(
                "run__name", "question__qid", "rank", "text", "key", "score"
            ),
            key=repr,
        ),
    }


def scores(c: Collection):
    runs = list(Run.objects.filter(collection=c).order_by("name"))
    config = score_config.check_config(
        metrics=[*BASE_METRICS, "p@3", "ndcg@5"],
        gains="default",
        beta=1.0,
        rbp_p=0.5,
        levels=["S", "A", "B"],
    )
    s = services.score_runs(c, runs, config)
    return {name: s.per_question[name].round(12) for name in s.runs}


def test_round_trip_gives_identical_judgments_and_scores(demo, tmp_path):
    User = get_user_model()
    assessor = User.objects.get(username="assessor1")
    # some history first: pool a run, judge a pooled answer, mark one incorrect
    af = Run.objects.get(collection=demo, name="AF")
    services.run_pool(run=af, by=User.objects.get(username="organizer"))
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    q.assessors.add(assessor)
    pooled = AnswerString.objects.get(question=q, text="Obuchi is as uninspiring as cold pizza")
    judging.string_judge(
        question=q, string=pooled.pk, by=assessor, synset=q.synsets.get(ordinal=2).pk
    )
    AnswerSynset.objects.filter(question=q, ordinal=1).update(label='gold, "first"')
    AnswerString.objects.filter(pk=pooled.pk).update(
        variants=["obuchi is as uninspiring", "Obuchi, cold pizza"]
    )
    path = tmp_path / "demo.zip"
    call_command("export_collection", "demo", str(path), stdout=io.StringIO())
    call_command("import_collection", str(path), "--slug", "demo-copy", stdout=io.StringIO())
    copy = Collection.objects.get(slug="demo-copy")
    assert judgments(copy) == judgments(demo)
    assert everything_else(copy) == everything_else(demo)
    a, b = scores(demo), scores(copy)
    assert list(a) == list(b) == ["AF", "noAF"]
    for name in a:
        assert a[name].equals(b[name])
    # exporting the copy gives the same content again
    again = zipfile.ZipFile(io.BytesIO(collection_export(collection=copy)))
    first = zipfile.ZipFile(path)
    for member in (
        "questions.csv",
        "strings.csv",
        "synsets.csv",
        "run_answers.csv",
        "events.jsonl",
        "runs.json",
    ):
        assert again.read(member) == first.read(member), member


def test_a_run_answer_with_control_characters_is_refused(demo):
    """A form feed, a vertical tab or DEL, which the forms refuse, a run file cannot bring
    in either (issue 27): the file is refused naming the line and the character, and an
    archive carrying one is refused naming the member and the line."""
    organizer = get_user_model().objects.get(username="organizer")
    for odd, code in (("Obuchi\x0cKeizo", "U+000C"), ("Keizo\x0b", "U+000B"), ("K\x7f", "U+007F")):
        with pytest.raises(
            InputError, match=re.escape(f"odd.tsv:2: contains the control character {code}")
        ):
            services.run_import(
                collection=demo,
                owner=organizer,
                name="odd",
                data=f"QAC1-1021\t1\tgood\nQAC1-1021\t2\t{odd}\n".encode(),
                filename="odd.tsv",
            )
    assert not Run.objects.filter(collection=demo, name="odd").exists()
    assert not AnswerString.objects.filter(
        question__collection=demo, text__contains="Keizo"
    ).exists()


def test_bad_archives_write_nothing(demo, tmp_path):
    data = collection_export(collection=demo)
    counts = (Collection.objects.count(), AnswerString.objects.count(), Run.objects.count())
    with pytest.raises(InputError, match="already exists"):
        collection_import(data=data, slug="demo")
    with pytest.raises(InputError, match="unreadable archive"):
        collection_import(data=b"not a zip", slug="x1")
    # a string pointing at a level that does not exist
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for item in src.namelist():
            body = src.read(item)
            if item == "strings.csv":
                body = body.replace(b",S,", b",Z,", 1)
            z.writestr(item, body)
    with pytest.raises(InputError, match="unknown level 'Z'"):
        collection_import(data=buf.getvalue(), slug="x2")
    assert (Collection.objects.count(), AnswerString.objects.count(), Run.objects.count()) == counts
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"junk")
    with pytest.raises(CommandError):
        call_command(
            "import_collection",
            str(bad),
            "--slug",
            "x3",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )


# -- undo in an imported collection ------------------------------------------------------------
def rows_named_by_snapshots(c: Collection):
    """Every (kind, id) the undoable snapshots of ``c`` name that is a row of the database."""
    named = set()
    for e in JudgmentEvent.objects.filter(collection=c):
        for side in (e.before, e.after):
            if "strings" in side:
                named |= {("string", int(k)) for k in side["strings"]}
                named |= {("synset", row[0]) for row in side["synsets"]}
    rows = {("string", pk) for pk in AnswerString.objects.values_list("pk", flat=True)}
    rows |= {("synset", pk) for pk in AnswerSynset.objects.values_list("pk", flat=True)}
    return named & rows


def test_undo_works_in_an_imported_collection_and_stays_inside_it(demo):
    User = get_user_model()
    organizer = User.objects.get(username="organizer")
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    first = q.strings.filter(synset__isnull=False).order_by("id").first()
    first_place = (first.synset.ordinal, first.level.code)
    # history: a string deleted (a row that no longer exists), one moved to a new synset
    judging.string_delete(question=q, string=first.pk, by=organizer)
    other = q.strings.filter(synset__isnull=False).order_by("id").first()
    other_ordinal = other.synset.ordinal
    judging.string_judge(question=q, string=other.pk, by=organizer, new_synset=True)
    source_rows = {s.pk: (s.text, s.synset_id, s.question_id) for s in AnswerString.objects.all()}
    copy = collection_import(data=collection_export(collection=demo), slug="copy")
    # every row the copy's snapshots name is a row of the copy
    named = rows_named_by_snapshots(copy)
    assert named
    assert all(
        AnswerString.objects.filter(pk=pk, question__collection=copy).exists()
        if kind == "string"
        else AnswerSynset.objects.filter(pk=pk, question__collection=copy).exists()
        for kind, pk in named
    )
    cq = Question.objects.get(collection=copy, qid="QAC1-1021")
    before_undo = judgments(copy)
    judging.question_undo(question=cq, by=organizer)  # the move
    moved = AnswerString.objects.get(question=cq, text=other.text)
    assert moved.synset.ordinal == other_ordinal
    judging.question_undo(question=cq, by=organizer)  # the delete
    back = AnswerString.objects.get(question=cq, text=first.text)
    assert (back.synset.ordinal, back.level.code) == first_place
    assert judgments(copy) != before_undo
    # the source collection was not touched
    assert {pk: v for pk, v in source_rows.items()} == {
        s.pk: (s.text, s.synset_id, s.question_id)
        for s in AnswerString.objects.filter(pk__in=source_rows)
    }
    assert not AnswerString.objects.filter(question=q, text=first.text).exists()
    # and undo in the source still works as before
    judging.question_undo(question=q, by=organizer)
    assert AnswerString.objects.get(question=q, text=other.text).synset.ordinal == other_ordinal


def test_undo_refuses_a_record_naming_rows_outside_its_question(demo):
    """A crafted (or corrupt) event: undo writes nothing and says why."""
    User = get_user_model()
    organizer = User.objects.get(username="organizer")
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    s = q.strings.order_by("id").first()
    event = judging.string_unjudge(question=q, string=s.pk, by=organizer)
    stranger_q = make_question(collection=make_collection(), qid="FAR", unjudged=["far away"])
    stranger = stranger_q.strings.get()
    snap = event.before["strings"][str(s.pk)]
    levels = make_collection().levels.first()
    crafted = {
        "string of another collection": dict(
            before=dict(event.before, strings={str(stranger.pk): dict(snap, text="HACKED")}),
            after=dict(event.after, strings={str(stranger.pk): None}),
        ),
        "synset of another question": dict(
            before=dict(
                event.before,
                synsets=[[AnswerSynset.objects.exclude(question=q).first().pk, "", ""]],
            )
        ),
        "level of another collection": dict(
            before=dict(event.before, strings={str(s.pk): dict(snap, level=levels.pk)})
        ),
        "unreadable": dict(before=dict(event.before, strings={"x": snap})),
        "unreadable status": dict(before=dict(event.before, status="gone")),
        "a username for a user id": dict(
            before=dict(event.before, strings={str(s.pk): dict(snap, judged_by="abc")})
        ),
        "a synset id as text": dict(
            before=dict(event.before, strings={str(s.pk): dict(snap, synset="1")})
        ),
    }
    for name, fields in crafted.items():
        JudgmentEvent.objects.filter(pk=event.pk).update(
            **{"before": event.before, "after": event.after, **fields}
        )
        state = (
            judgments(demo),
            list(AnswerString.objects.values_list("pk", "question_id", "text", "synset_id")),
            list(AnswerSynset.objects.values_list("pk", "question_id", "ordinal")),
            JudgmentEvent.objects.count(),
        )
        with pytest.raises(edits.Conflict, match="cannot be undone"):
            judging.question_undo(question=q, by=organizer)
        assert state == (
            judgments(demo),
            list(AnswerString.objects.values_list("pk", "question_id", "text", "synset_id")),
            list(AnswerSynset.objects.values_list("pk", "question_id", "ordinal")),
            JudgmentEvent.objects.count(),
        ), name
    stranger.refresh_from_db()
    assert (stranger.text, stranger.question_id) == ("far away", stranger_q.pk)


def test_undo_refuses_to_recreate_a_string_whose_key_came_back(demo):
    User = get_user_model()
    organizer = User.objects.get(username="organizer")
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    s = q.strings.order_by("id").first()
    judging.string_delete(question=q, string=s.pk, by=organizer)
    # pooling (an event of no question) brings the same key back
    judging.strings_add_unjudged(rows=[(q.pk, s.key, s.text)], source="pool", reason="pooled")
    with pytest.raises(edits.Conflict, match="added again"):
        judging.question_undo(question=q, by=organizer)


# -- version 1 archives ----------------------------------------------------------------------
def as_version_1(data: bytes) -> bytes:
    """The archive as version 1 wrote it: no id/label/variants columns, events without id
    and with database ids in their snapshots."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in src.namelist():
            if name in ("layers.csv", "layer_judgments.csv"):  # version 3 on
                continue
            body = src.read(name).decode()
            if name == "manifest.json":
                m = json.loads(body)
                for lv in m["levels"]:
                    del lv["examples"]  # version 4 on
                body = json.dumps(dict(m, version=1))
            elif name in ("synsets.csv", "strings.csv"):
                header, rows = read_member_csv(body)
                header = [h for h in header if h not in ("id", "label", "variants")]
                body = write_csv(header, [[r[h] for h in header] for r in rows])
            elif name == "events.jsonl":
                body = "".join(
                    json.dumps(
                        {k: v for k, v in json.loads(line).items() if k not in ("id", "layer")}
                    )
                    + "\n"
                    for line in body.splitlines()
                )
            z.writestr(name, body)
    return buf.getvalue()


def test_version_1_archives_are_still_read_and_their_actions_not_undone(demo):
    User = get_user_model()
    organizer = User.objects.get(username="organizer")
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    s = q.strings.order_by("id").first()
    judging.string_unjudge(question=q, string=s.pk, by=organizer)
    copy = collection_import(data=as_version_1(collection_export(collection=demo)), slug="old")
    assert [j[:2] + j[3:4] + j[5:] for j in judgments(copy)] == [
        j[:2] + j[3:4] + j[5:] for j in judgments(demo)
    ]
    event = JudgmentEvent.objects.filter(collection=copy, action="string_unjudge").get()
    assert "strings" not in event.after and "synsets" not in event.after
    assert event.after["strings_without_ids"][0]["text"] == s.text
    assert "synset" not in event.after["strings_without_ids"][0]
    cq = Question.objects.get(collection=copy, qid="QAC1-1021")
    with pytest.raises(edits.Conflict, match="Nothing to undo"):
        judging.question_undo(question=cq, by=organizer)
    assert rows_named_by_snapshots(copy) == set()


# -- validation ----------------------------------------------------------------------------------
def rewrite(data: bytes, **changes) -> bytes:
    """The archive with members changed: name=callable(text) -> text, or None to drop."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in src.namelist():
            key = name.replace(".", "_")
            if key in changes and changes[key] is None:
                continue
            body = src.read(name).decode()
            z.writestr(name, changes[key](body) if key in changes else body)
    return buf.getvalue()


def manifest(change):
    def edit(text):
        m = json.loads(text)
        change(m)
        return json.dumps(m)

    return edit


def as_version(version):
    """A manifest change to an older ``version`` (before 4, levels had no examples)."""

    def change(m):
        m["version"] = version
        for lv in m["levels"]:
            lv.pop("examples", None)

    return change


def first_line_replaced(old, new):
    return lambda text: text.replace(old, new, 1)


BAD = {
    "negative gain": (
        dict(manifest_json=manifest(lambda m: m["levels"][0].update(gain=-1))),
        "manifest.json: level 1: gain -1 is out of range",
    ),
    "gain not a number": (
        dict(manifest_json=manifest(lambda m: m["levels"][1].update(gain="NaN"))),
        "level 2: gain 'NaN'",
    ),
    "no levels": (
        dict(manifest_json=manifest(lambda m: m.update(levels=[]))),
        "at least one level",
    ),
    "level code twice": (
        dict(manifest_json=manifest(lambda m: m["levels"][1].update(code="S"))),
        "code 'S' appears twice",
    ),
    "long level code": (
        dict(manifest_json=manifest(lambda m: m["levels"][0].update(code="TOOLONGCODE"))),
        "1 to 8 characters",
    ),
    "L' zero": (
        dict(manifest_json=manifest(lambda m: m["collection"].update(max_output_size=0))),
        "collection.max_output_size",
    ),
    "bad matching": (
        dict(manifest_json=manifest(lambda m: m["collection"].update(matching_mode="fuzzy"))),
        "collection.matching_mode",
    ),
    "bad role": (
        dict(manifest_json=manifest(lambda m: m["members"][0].update(role="king"))),
        "member 1: needs a valid username",
    ),
    "bad username": (
        dict(manifest_json=manifest(lambda m: m["members"][0].update(username="a b/c"))),
        "valid username",
    ),
    "not an archive": (dict(manifest_json=manifest(lambda m: m.update(version=99))), "version 99"),
    "manifest not json": (dict(manifest_json=lambda t: "{"), "manifest.json:1: not JSON"),
    "duplicate qid": (dict(questions_csv=lambda t: t + t.splitlines()[1] + "\n"), "appears twice"),
    "bad status": (
        dict(questions_csv=lambda t: t.replace(",todo,", ",later,", 1)),
        "status 'later'",
    ),
    "NUL in a question": (
        dict(questions_csv=lambda t: t.replace("Who", "W\x00ho", 1)),
        "questions.csv:2: holds a NUL byte",
    ),
    "ESC in a question": (
        dict(questions_csv=lambda t: t.replace("Who", "W\x1bho", 1)),
        "questions.csv:2: holds the control character U+001B",
    ),
    "DEL escaped in an event": (
        dict(events_jsonl=lambda t: t.replace('"demo_load"', '"demo\\u007fload"', 1)),
        "events.jsonl:1: holds the control character U+007F",
    ),
    "NUL escaped in an event": (
        dict(events_jsonl=lambda t: t.replace('"demo_load"', '"demo\\u0000load"', 1)),
        "events.jsonl:1: holds a NUL byte",
    ),
    "unknown level": (dict(strings_csv=lambda t: t.replace(",S,", ",Z,", 1)), "unknown level 'Z'"),
    "synset without level": (
        dict(strings_csv=lambda t: t.replace(",S,", ",,", 1)),
        "needs a level",
    ),
    "duplicate key": (
        dict(strings_csv=lambda t: t + t.splitlines()[1] + "\n"),
        "appears twice in question",
    ),
    "bad variants": (
        dict(strings_csv=lambda t: t.replace(",,john lennon,", ",[1],john lennon,", 1)),
        "not a JSON list of strings",
    ),
    "wrong columns": (
        dict(synsets_csv=lambda t: t.replace("label", "name", 1)),
        "synsets.csv:1: columns",
    ),
    "short row": (dict(synsets_csv=lambda t: t + "9,EX1-BEATLES\n"), "5 fields expected"),
    "duplicate synset": (
        dict(synsets_csv=lambda t: t + "99," + ",".join(t.splitlines()[1].split(",")[1:]) + "\n"),
        "appears twice",
    ),
    "bad rank": (
        dict(run_answers_csv=lambda t: t.replace(",1,", ",0,", 1)),
        "rank '0' is not a number >= 1",
    ),
    "unknown run": (dict(runs_json=lambda t: t.replace('"AF"', '"XX"', 1)), "unknown run 'AF'"),
    "missing member": (dict(runs_json=None), "member 'runs.json' is missing"),
    "forward undo": (
        dict(
            events_jsonl=lambda t: t.replace(
                '"after": {"synsets": 4}', '"after": {"undoes": 5, "strings": {}, "synsets": []}', 1
            )
        ),
        "undoes 5, which is not an earlier event",
    ),
    "string of another question": (
        dict(
            events_jsonl=lambda t: t.replace(
                '"after": {"synsets": 4}',
                '"after": {"strings": {"999": null, "40": null}, "synsets": []}',
                1,
            )
        ),
        "names string 40 of question",
    ),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_archives_are_refused_with_their_problem_named(demo, case):
    changes, message = BAD[case]
    data = rewrite(collection_export(collection=demo), **changes)
    counts = (
        Collection.objects.count(),
        AnswerString.objects.count(),
        Run.objects.count(),
        JudgmentEvent.objects.count(),
        get_user_model().objects.count(),
    )
    with pytest.raises(InputError) as refused:
        collection_import(data=data, slug="bad", filename="bad.zip")
    assert message in str(refused.value), str(refused.value)
    assert (
        Collection.objects.count(),
        AnswerString.objects.count(),
        Run.objects.count(),
        JudgmentEvent.objects.count(),
        get_user_model().objects.count(),
    ) == counts


def test_zip_bombs_and_strange_members_are_refused(demo, settings):
    data = collection_export(collection=demo)
    settings.ARCHIVE_MAX_MB = 1
    bomb = rewrite(data, events_jsonl=lambda t: t + " " * (2 * 1024 * 1024) + "\n")
    assert len(bomb) < 100_000
    with pytest.raises(InputError, match="larger than 1 MB once unpacked"):
        collection_import(data=bomb, slug="bomb")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in zipfile.ZipFile(io.BytesIO(data)).namelist():
            z.writestr(name, zipfile.ZipFile(io.BytesIO(data)).read(name))
        z.writestr("../evil.sh", "rm -rf /")
    with pytest.raises(InputError, match=r"unexpected member '\.\./evil\.sh'"):
        collection_import(data=buf.getvalue(), slug="evil")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for i in range(100):
            z.writestr(f"m{i}", "")
    with pytest.raises(InputError, match="100 members"):
        collection_import(data=buf.getvalue(), slug="many")
    assert not Collection.objects.filter(slug__in=["bomb", "evil", "many"]).exists()


def test_the_command_prints_every_problem_without_a_traceback(demo, tmp_path):
    data = rewrite(
        collection_export(collection=demo),
        manifest_json=manifest(lambda m: m["levels"][0].update(gain=-1)),
        questions_csv=lambda t: t + t.splitlines()[1] + "\n",
    )
    path = tmp_path / "bad.zip"
    path.write_bytes(data)
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command(
            "import_collection", str(path), "--slug", "x", stdout=io.StringIO(), stderr=err
        )
    text = err.getvalue()
    assert "bad.zip:manifest.json: level 1: gain -1" in text
    assert "bad.zip:questions.csv:" in text and "appears twice" in text
    assert "Traceback" not in text


def test_damaged_archives_give_an_input_error_never_a_traceback(demo):
    data = collection_export(collection=demo)
    for i, pos in enumerate(range(40, len(data) - 40, max(1, len(data) // 60))):
        damaged = data[:pos] + bytes([data[pos] ^ 0x55]) + data[pos + 1 :]
        try:
            collection_import(data=damaged, slug=f"damaged-{i}")
        except InputError:
            pass
    for cut in (10, len(data) // 2, len(data) - 10):
        with pytest.raises(InputError):
            collection_import(data=data[:cut], slug="cut")
    with pytest.raises(InputError, match="control characters"):
        collection_import(data=data, slug="named", name="bad\x00name")


def test_times_without_a_zone_are_read_as_utc(demo):
    data = rewrite(
        collection_export(collection=demo), strings_csv=lambda t: t.replace("+00:00", "")
    )
    copy = collection_import(data=data, slug="naive")
    assert judgments(copy) == judgments(demo)


def test_assignments_of_members_who_do_not_judge_are_dropped(demo):
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    participant = demo.memberships.filter(role="participant").first().user
    Question.assessors.through.objects.create(question=q, user=participant)
    copy = collection_import(data=collection_export(collection=demo), slug="judges")
    cq = Question.objects.get(collection=copy, qid="QAC1-1021")
    assert participant not in cq.assessors.all()
    assert set(cq.assessors.all()) == set(q.assessors.exclude(pk=participant.pk))


# -- layers (version 3) ---------------------------------------------------------------------------
def layered(demo):
    """Two assessors judge a question of the demo independently; one adjudication."""
    from annotate import adjudication, layers
    from annotate.models import JudgingLayer

    User = get_user_model()
    org = User.objects.get(username="organizer")
    a1, a2 = User.objects.get(username="assessor1"), User.objects.get(username="assessor2")
    # the named adjudicator judges no layer of the question (``layers_request``)
    adjudicator = make_user(username="adjudicator3")
    add_member(collection=demo, user=adjudicator, role="assessor")
    q = make_question(collection=demo, qid="LAYERED", unjudged=["x", "y", "z"])
    layers.layers_request(
        collection=demo, questions=[q], assessors=[a1, a2], by=org, adjudicator=adjudicator
    )
    ids = {s.text: s.pk for s in q.strings.all()}
    for user, plan in (
        (a1, [("x", True), ("y", True), ("z", False)]),
        (a2, [("x", True), ("y", False), ("z", False)]),
    ):
        layer = JudgingLayer.objects.get(question=q, assessor=user)
        for text, correct in plan:
            if correct:
                layers.layer_judge(
                    layer=layer, string=ids[text], new_group=True, level="A", by=user
                )
            else:
                layers.layer_judge(layer=layer, string=ids[text], by=user)
        layers.layer_set_level(layer=layer, string=ids["x"], level="S", by=user)
        layers.layer_undo(layer=layer, by=user)
        layers.layer_mark_done(layer=layer, by=user)
    adjudication.adjudicate_take(
        question=q,
        layer=JudgingLayer.objects.get(question=q, assessor=a1),
        strings=[ids["y"]],
        by=org,
    )
    return q


def layer_state(c: Collection):
    from annotate.models import JudgingLayer, LayerJudgment, LayerRequest

    return {
        "requests": sorted(
            LayerRequest.objects.filter(question__collection=c).values_list(
                "question__qid", "k", "adjudicator__username", "gold_at"
            )
        ),
        "layers": sorted(
            JudgingLayer.objects.filter(question__collection=c).values_list(
                "question__qid", "assessor__username", "version", "started_at", "done_at", "seconds"
            )
        ),
        "judgments": sorted(
            LayerJudgment.objects.filter(layer__question__collection=c).values_list(
                "layer__question__qid",
                "layer__assessor__username",
                "string__text",
                "group",
                "level__code",
                "judged_at",
            ),
            key=repr,
        ),
        "layer_events": list(
            JudgmentEvent.objects.filter(collection=c, layer__isnull=False)
            .order_by("id")
            .values_list("action", "layer__assessor__username")
        ),
    }


def test_round_trip_keeps_layers_and_adjudications(demo):
    from annotate import agreement_report, edits, judging, layers
    from annotate.models import JudgingLayer

    layered(demo)
    # a second question whose layer is done while the other is not: it may still be reopened
    User = get_user_model()
    org, a1 = User.objects.get(username="organizer"), User.objects.get(username="assessor1")
    half = make_question(collection=demo, qid="HALF", unjudged=["p", "q"])
    layers.layers_request(
        collection=demo,
        questions=[half],
        assessors=[a1, User.objects.get(username="assessor2")],
        by=org,
    )
    mine = JudgingLayer.objects.get(question=half, assessor=a1)
    for s in half.strings.all():
        layers.layer_judge(layer=mine, string=s.pk, by=a1)
    layers.layer_mark_done(layer=mine, by=a1)
    data = collection_export(collection=demo)
    copy = collection_import(data=data, slug="copy")
    assert layer_state(copy) == layer_state(demo)
    assert judgments(copy) == judgments(demo)
    assert (
        agreement_report.collection_agreement(copy).overall
        == agreement_report.collection_agreement(demo).overall
    )
    # the copy exports the same layers again
    again = zipfile.ZipFile(io.BytesIO(collection_export(collection=copy)))
    first = zipfile.ZipFile(io.BytesIO(data))
    for name in ("layers.csv", "layer_judgments.csv"):
        assert again.read(name) == first.read(name)
    # undo works in the copy: gold's (the adjudication), and a reopened layer's own
    cq = Question.objects.get(collection=copy, qid="LAYERED")
    judging.question_undo(question=cq, by=org)
    assert cq.strings.get(text="y").judged_at is None
    # the copy keeps LAYERED sealed (every layer done, gold derived): no reopening there
    layer = JudgingLayer.objects.get(question=cq, assessor=a1)
    with pytest.raises(edits.Conflict):
        layers.layer_mark_done(layer=layer, by=a1, done=False)
    layer = JudgingLayer.objects.get(question__collection=copy, question__qid="HALF", assessor=a1)
    layers.layer_mark_done(layer=layer, by=a1, done=False)
    layers.layer_undo(layer=layer, by=a1)  # undoes the judgment of the last string
    assert layer.judgments.count() == 1


def test_version_2_archives_have_no_layers(demo):
    layered(demo)
    data = rewrite(
        collection_export(collection=demo),
        layers_csv=None,
        layer_judgments_csv=None,
        manifest_json=manifest(as_version(2)),
        events_jsonl=lambda t: "".join(
            json.dumps({k: v for k, v in json.loads(line).items() if k != "layer"}) + "\n"
            for line in t.splitlines()
        ),
    )
    copy = collection_import(data=data, slug="v2")
    assert layer_state(copy)["layers"] == []


def test_bad_layers_are_refused(demo):
    layered(demo)
    data = rewrite(
        collection_export(collection=demo), layer_judgments_csv=lambda t: t.replace(",A,", ",Q,", 1)
    )
    with pytest.raises(InputError, match="a synset number with a known level"):
        collection_import(data=data, slug="bad")
    data = rewrite(collection_export(collection=demo), layers_csv=None)
    with pytest.raises(InputError, match=r"member 'layers\.csv' is missing"):
        collection_import(data=data, slug="bad")
