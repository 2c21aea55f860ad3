"""Rules written once and used everywhere: staff and superusers act as organizers on every
page, both apps' upload forms refuse an oversized file with the same message, the per-question
counts of every question list come from one queryset method, the default metrics and the NIL
string are the scoring engine's, the app version is the installed package's, and "organizer
or assessor" (the roles that judge) is written once."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate import judging
from annotate.forms import ImportForm
from annotate.models import JUDGE_ROLES, Collection, Question, Role, is_site_staff
from annotate.permissions import collection_role
from annotate.selectors import question_list_queryset
from evaluation import score_pages
from evaluation.analysis import score_config
from evaluation.forms import RunUploadForm
from evaluation.metrics import DEFAULT_METRICS, NIL
from evaluation.models import Run
from tests.factories import make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def _superuser_only():
    user = get_user_model().objects.create_user(username="root", password="pw-123456")
    user.is_superuser = True
    user.save()
    return user


def test_a_superuser_who_is_not_staff_acts_as_organizer_everywhere(client):
    collection = make_collection()
    user = _superuser_only()
    assert is_site_staff(user)
    assert collection_role(user, collection) == Role.ORGANIZER
    assert list(Collection.objects.visible_to(user)) == [collection]
    make_run(collection=collection, owner=make_user())
    assert Run.objects.visible_to(user).count() == 1
    client.force_login(user)
    page = client.get(reverse("annotate:collection-list"))
    assert page.status_code == 200
    (row,) = page.context["rows"]
    assert row["role"] == Role.ORGANIZER


def test_a_plain_user_is_not_site_staff():
    assert not is_site_staff(make_user())
    assert is_site_staff(make_user(staff=True))


@pytest.mark.parametrize(
    "form_class, setting, what",
    [(ImportForm, "IMPORT_MAX_MB", "imports"), (RunUploadForm, "RUN_UPLOAD_MAX_MB", "runs")],
)
def test_both_upload_forms_refuse_an_oversized_file_alike(settings, form_class, setting, what):
    setattr(settings, setting, 1)
    big = SimpleUploadedFile("f.csv", b"x" * (1024 * 1024 + 1))
    form = form_class(data={"kind": "questions", "name": "r1"}, files={"file": big})
    assert not form.is_valid()
    assert form.errors["file"] == [f"The file is 1.0 MB; {what} may be at most 1 MB."]


def test_question_counts_come_from_one_queryset_method():
    collection = make_collection()
    make_question(
        collection=collection,
        qid="Q1",
        incorrect=["x"],
        unjudged=["u1", "u2"],
        synsets=[[("a", "S"), ("a2", "S")], [("b", "A")]],
    )
    make_question(collection=collection, qid="Q2")
    counts = {
        q.qid: (q.n_synsets, q.n_strings, q.n_unjudged)
        for q in Question.objects.filter(collection=collection).with_counts()
    }
    assert counts == {"Q1": (2, 6, 2), "Q2": (0, 0, 0)}
    listed = {
        q.qid: (q.n_synsets, q.n_strings, q.n_unjudged) for q in question_list_queryset(collection)
    }
    assert listed == counts


def test_defaults_and_nil_are_the_engines():
    assert score_config.ScoreConfig().metrics == DEFAULT_METRICS
    assert score_config.DEFAULT_METRICS is DEFAULT_METRICS
    assert judging.NIL is NIL


def test_the_app_version_is_the_installed_packages():
    assert score_pages.APP_VERSION == importlib.metadata.version("qasynset")


ROOT = Path(__file__).resolve().parents[1]

# the two roles alone (not a list of all three roles, such as a form's choices)
JUDGE_PAIR = re.compile(
    r"(?<!PARTICIPANT, )Role\.(ORGANIZER|ASSESSOR),\s*Role\.(ORGANIZER|ASSESSOR)(?!,\s*Role\.)"
)


def test_the_judging_roles_are_written_once():
    assert JUDGE_PAIR.search("role__in=[Role.ASSESSOR, Role.ORGANIZER]")
    assert JUDGE_PAIR.search("require_role(user, c, Role.ORGANIZER, Role.ASSESSOR)")
    assert not JUDGE_PAIR.search("for r in (Role.PARTICIPANT, Role.ASSESSOR, Role.ORGANIZER)")
    assert set(JUDGE_ROLES) == {Role.ORGANIZER, Role.ASSESSOR}
    spelled = []
    for app in ("annotate", "evaluation", "api", "config", "jobs"):
        for path in (ROOT / app).rglob("*.py"):
            name = path.relative_to(ROOT).as_posix()
            if "migrations" in path.parts:
                continue
            source = path.read_text(encoding="utf-8")
            if JUDGE_PAIR.search(source) and name != "annotate/models.py":
                spelled.append(name)
    assert spelled == [], "use annotate.models.JUDGE_ROLES"


ENUM_LITERAL = re.compile(
    r"(==|!=|\bin)\s*[\"'](organizer|assessor|participant|todo|in_progress|done)[\"']"
)


def test_templates_compare_no_role_or_status_literal():
    assert ENUM_LITERAL.search('{% if role == "organizer" %}')
    assert ENUM_LITERAL.search("{% if q.status != 'done' %}")
    found = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "templates").rglob("*.html")
        if ENUM_LITERAL.search(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "pass a flag (is_organizer) or use role.is_organizer"


def test_csv_downloads_are_built_by_one_function():
    built = []
    for app in ("annotate", "evaluation", "api", "config", "jobs"):
        for path in (ROOT / app).rglob("*.py"):
            name = path.relative_to(ROOT).as_posix()
            if "text/csv" in path.read_text(encoding="utf-8"):
                built.append(name)
    # the layers' export is changed on another branch
    assert sorted(built) == ["annotate/layer_views.py", "config/downloads.py"] or built == [
        "config/downloads.py"
    ], "use config.downloads.csv_download"


def test_the_pre_commit_hooks_run_the_dev_extras_versions():
    hooks = set(
        re.findall(
            r'additional_dependencies: \["([^"]+)"\]',
            (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"),
        )
    )
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["dev"]
    assert {h.split("==")[0] for h in hooks} == {"ruff", "django-upgrade", "djhtml"}
    assert hooks <= set(dev), hooks - set(dev)
