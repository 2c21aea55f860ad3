"""Role matrix: every URL pattern x every role x {GET, POST} against the expected outcome
in ``EXPECTED`` (the one place that says who may do what), then explicit leak checks.

The objects are realistic: the demo collection, a question assigned to the assessor, the
participant's own run (and a second participant with a run of their own).  Every request
runs in a savepoint that is rolled back, so one request cannot change what the next one
sees, and the test compares a snapshot of the database before and after: a page whose
class is not "write" must not change anything, whoever asks.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.core.cache import caches
from django.db import transaction
from django.test import Client
from django.urls import get_resolver
from django.utils import timezone
from django.utils.html import escape

from annotate.models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    Level,
    Membership,
    Question,
)
from api.models import ApiToken
from api.services import api_token_create
from evaluation.models import Run, RunAnswer
from jobs.models import Job, JobOutput, JobStatus
from tests.factories import add_member, make_collection, make_question, make_run, make_user
from tests.test_login_required import walk

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "nonmember", "assessor", "participant", "other", "organizer", "staff")

# Outcome classes: "ok" 2xx/3xx (not to a login page) and nothing written; "write" the same
# status but the request may change the database; "login" a redirect to a login page;
# "403", "404", "405" that status.  A 500 is never expected.  POST bodies are empty except
# for the pages in POST_BODIES.  Admin model pages are listed by ADMIN_MODEL_ROUTES below.
# Anonymous requests: LoginRequiredMiddleware sends them to the login page first.
EXPECTED: dict[str, dict[str, str]] = {
    #                                anon  nonmem assess partic other org   staff
    "home": {"GET": "login ok ok ok ok ok ok", "POST": "login 405 405 405 405 405 405"},
    # an invited member's one-time link (here a spent one) and its last page: public
    "set-password": {"GET": "ok ok ok ok ok ok ok", "POST": "ok ok ok ok ok ok ok"},
    "set-password-done": {"GET": "ok ok ok ok ok ok ok", "POST": "405 405 405 405 405 405 405"},
    # the icon is public: a redirect to the static file, no login needed
    "favicon": {"GET": "ok ok ok ok ok ok ok", "POST": "405 405 405 405 405 405 405"},
    # the glossary of the figures: every signed-in user, no collection
    "glossary": {"GET": "login ok ok ok ok ok ok", "POST": "login 405 405 405 405 405 405"},
    # logging out ends on the login page (LOGOUT_REDIRECT_URL)
    "logout": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login login login login login login login",
    },
    "annotate:collection-list": {
        "GET": "login ok ok ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # organizers (of any collection), staff and holders of annotate.add_collection may
    # create a collection; assessors, participants and non-members may not
    "annotate:collection-create": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 403 403 403 403 write write",
    },
    "annotate:collection-edit": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 403 403 403 403 write write",
    },
    # changing it re-keys strings and run answers: the evaluation app's page
    "evaluation:collection-matching-mode": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 403 403 403 403 write write",
    },
    "annotate:collection-members": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 403 403 403 403 write write",
    },
    "annotate:collection-import": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 403 403 403 403 ok ok",
    },
    "annotate:collection-import-confirm": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 ok ok",
    },
    "annotate:collection-export": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:collection-dashboard": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:collection-detail": {
        "GET": "login 403 ok ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # participants never see the judging pages or the pool
    "annotate:question-list": {
        "GET": "login 403 ok 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:question-assign": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 write write",
    },
    "annotate:question-judge": {
        "GET": "login 403 ok 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:question-act": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 write 403 403 write write",
    },
    "annotate:my-queue": {
        "GET": "login ok ok ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:next-question": {
        "GET": "login ok ok ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # the scripts' translations: public, as the log-in page's scripts need them
    "javascript-catalog": {
        "GET": "ok ok ok ok ok ok ok",
        "POST": "405 405 405 405 405 405 405",
    },
    # the menu's language switcher: anyone, before log-in too (a person's choice is kept)
    "annotate:language-set": {
        "GET": "405 405 405 405 405 405 405",
        "POST": "ok write write write write write write",
    },
    # everyone manages their own API tokens; nobody revokes another user's (404)
    "account:token-list": {
        "GET": "login ok ok ok ok ok ok",
        "POST": "login write write write write write write",
    },
    "account:token-revoke": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 404 404 write 404 404 404",
    },
    # several assessors per question: organizers see agreement and adjudicate (a named
    # adjudicator too); an assessor opens only their own layer (404 without one);
    # participants never see layers
    "annotate:collection-agreement": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:collection-layers-request": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 write write",
    },
    "annotate:collection-layers-csv": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:collection-layers-import": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 ok ok",
    },
    # the questions waiting for the user as their named adjudicator: everyone's own list
    "annotate:adjudication-queue": {
        "GET": "login ok ok ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:question-adjudicate": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:question-adjudicate-act": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 ok ok",
    },
    "annotate:question-layer": {
        "GET": "login 403 404 403 403 404 404",
        "POST": "login 405 405 405 405 405 405",
    },
    "annotate:question-layer-act": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 404 403 403 404 404",
    },
    "evaluation:layer-scores": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:layer-scores-csv": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:my-runs": {
        "GET": "login ok ok ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # scores: organizers and participants only; assessors judge blind
    "evaluation:run-list": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:scores-progress": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:run-list-csv": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:run-upload": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 403 403 write write write write",
    },
    # the run is the participant's: the other participant may not see it (unpublished)
    "evaluation:run-detail": {
        "GET": "login 403 403 ok 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:run-scores-csv": {
        "GET": "login 403 403 ok 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # the participant owns the run and the demo is open for submissions: the owner, the
    # organizers and staff may withdraw or replace it; the other participant may not
    "evaluation:run-withdraw": {
        "GET": "login 403 403 ok 403 ok ok",
        "POST": "login 403 403 write 403 write write",
    },
    "evaluation:run-replace": {
        "GET": "login 403 403 ok 403 ok ok",
        "POST": "login 403 403 write 403 write write",
    },
    "evaluation:run-pool": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 write write",
    },
    # every run of the collection to the assessors' pool (a job): organizers only
    "evaluation:run-pool-all": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 write write",
    },
    "evaluation:compare": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # compare.csv needs two runs: participants see only their own two
    "evaluation:compare-csv": {
        "GET": "login 403 403 ok 404 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:ranking": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:ranking-csv": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    "evaluation:ranking-matrix-csv": {
        "GET": "login 403 403 ok ok ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # computed over every run of the collection: organizers only
    "evaluation:reliability": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # computing a report starts a job (a small one runs in the request)
    "evaluation:reliability-compute": {
        "GET": "login 405 405 405 405 405 405",
        "POST": "login 403 403 403 403 write write",
    },
    # the collection's archive, made by a job whose file only its starter downloads
    "evaluation:archive-export": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 403 403 403 403 write write",
    },
    # an archive imported as a new collection: whoever may create a collection
    "evaluation:archive-import": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 403 403 403 403 ok ok",
    },
    # one file of the reliability page (``kind``: a table or the samples file)
    "evaluation:reliability-download": {
        "GET": "login 403 403 403 403 ok ok",
        "POST": "login 405 405 405 405 405 405",
    },
    # the admin site is for staff only; others are sent to the admin's login page
    "admin:index": {
        "GET": "login login login login login login ok",
        "POST": "login login login login login login ok",
    },
    # a non-staff user is sent to the admin index (then to the login page); logging out
    # ends on the login page
    "admin:logout": {"GET": "login ok ok ok ok ok 405", "POST": "login ok ok ok ok ok login"},
    "admin:password_change": {
        "GET": "login login login login login login ok",
        "POST": "login login login login login login ok",
    },
    "admin:password_change_done": {
        "GET": "login login login login login login ok",
        "POST": "login login login login login login 405",
    },
    "admin:autocomplete": {
        "GET": "login login login login login login 403",
        "POST": "login login login login login login 405",
    },
    "admin:jsi18n": {
        "GET": "login login login login login login ok",
        "POST": "login login login login login login 405",
    },
    "admin:view_on_site": {
        "GET": "login login login login login login 404",
        "POST": "login login login login login login 404",
    },
}
# Every registered model's admin pages behave alike: staff only, and an empty POST
# (add, change, delete, password) re-renders a form or a confirmation, writing nothing.
ADMIN_MODELS = (
    "auth_group",
    "jobs_job",
    "auth_user",
    "annotate_collection",
    "annotate_membership",
    "annotate_level",
    "annotate_question",
    "annotate_answersynset",
    "annotate_answerstring",
    "annotate_judgmentevent",
    "evaluation_run",
    "evaluation_runanswer",
)
ADMIN_MODEL_ROUTES = ("changelist", "add", "history", "delete", "change", "redirect")
STAFF_ONLY = {
    "GET": "login login login login login login ok",
    "POST": "login login login login login login ok",
}
EXPECTED.update({f"admin:{m}_{r}": STAFF_ONLY for m in ADMIN_MODELS for r in ADMIN_MODEL_ROUTES})
EXPECTED["admin:auth_user_password_change"] = STAFF_ONLY
# jobs are read-only in the admin (they are made by starting one); staff may delete them
EXPECTED["admin:jobs_job_add"] = {
    "GET": "login login login login login login 403",
    "POST": "login login login login login login 403",
}
EXPECTED["admin:jobs_job_change"] = {
    "GET": "login login login login login login ok",
    "POST": "login login login login login login 403",
}
# the audit trail is read-only, even for staff
EXPECTED["admin:annotate_judgmentevent_change"] = {
    "GET": "login login login login login login ok",
    "POST": "login login login login login login 403",
}
EXPECTED["admin:annotate_judgmentevent_delete"] = {
    "GET": "login login login login login login 403",
    "POST": "login login login login login login 403",
}

# judgments are shown in the admin, never changed there (annotate/admin.py: a change would
# skip the judging writes' locks, keys, audit trail and judgment version), nor run answers
# (evaluation/admin.py); a run is uploaded on its page, never added in the admin
REFUSED = {
    "GET": "login login login login login login 403",
    "POST": "login login login login login login 403",
}
for model in ("annotate_level", "annotate_answersynset", "annotate_answerstring"):
    EXPECTED[f"admin:{model}_add"] = REFUSED
    EXPECTED[f"admin:{model}_delete"] = REFUSED
    EXPECTED[f"admin:{model}_change"] = EXPECTED["admin:annotate_judgmentevent_change"]
EXPECTED["admin:evaluation_runanswer_add"] = REFUSED
EXPECTED["admin:evaluation_runanswer_delete"] = REFUSED
EXPECTED["admin:evaluation_runanswer_change"] = EXPECTED["admin:annotate_judgmentevent_change"]
EXPECTED["admin:evaluation_run_add"] = REFUSED

# a job is its owner's (here the participant's) and the staff's, whoever else asks
OWNER_ONLY = {
    "GET": "login 404 404 ok 404 404 ok",
    "POST": "login 405 405 405 405 405 405",
}
EXPECTED.update(
    {
        "jobs:job-list": {
            "GET": "login ok ok ok ok ok ok",
            "POST": "login 405 405 405 405 405 405",
        },
        "jobs:job-detail": OWNER_ONLY,
        "jobs:job-status": OWNER_ONLY,
        "jobs:job-output": OWNER_ONLY,
        # the job has ended: cancel changes nothing
        "jobs:job-cancel": {
            "GET": "login 405 405 405 405 405 405",
            "POST": "login 404 404 ok 404 404 ok",
        },
    }
)

SKIPPED = {"login", "admin:login"}  # the login pages themselves (public)

# What a page that answers 200 to a GET must show, whoever asks: its heading (or a CSV's
# first line), so that a 200 is the right page and not an error or an empty shell.  ``{c}``
# is the collection's name, ``{q}`` the question's id, ``{run}`` the run's name.  Admin
# pages need the admin's title.
PAGE_TEXT: dict[str, tuple[str, ...]] = {
    "javascript-catalog": ("django.catalog",),
    "jobs:job-list": ("<h1>Jobs</h1>",),
    "jobs:job-detail": ("<h1>Job</h1>", "Report of run-secret-af"),
    "jobs:job-status": ("Report of run-secret-af",),
    "jobs:job-output": ("a,b",),
    "annotate:collection-list": ("<h1>Collections</h1>",),
    "glossary": ("<h1>Glossary</h1>", 'id="q-measure"'),
    "set-password": ("<h1>This link cannot be used</h1>",),
    "set-password-done": ("<h1>Your password is set</h1>",),
    "annotate:collection-create": ("<h1>New collection</h1>",),
    "annotate:collection-edit": ("<h1>Edit {c}</h1>",),
    "evaluation:collection-matching-mode": ("<h1>Matching mode</h1>",),
    "annotate:collection-members": ("<h1>Members</h1>", "assessor1"),
    "annotate:collection-import": ("<h1>Import and export</h1>",),
    "annotate:collection-export": ("question_id,synset_id,answer,level", "{secret}"),
    "annotate:collection-detail": ("<h1>{c}</h1>",),
    "annotate:collection-dashboard": ("<h1>Dashboard</h1>", "assessor1"),
    "annotate:question-list": ("<h1>Questions</h1>", "{q}"),
    "annotate:question-judge": ('<span class="qid">{q}</span>', "{secret}"),
    "annotate:my-queue": ("<h1>My queue</h1>",),
    "account:token-list": ("<h1>API tokens</h1>",),
    "annotate:collection-agreement": ("<h1>Agreement</h1>",),
    "annotate:collection-layers-csv": ("question_id,synset_id,answer,level,assessor,done",),
    "annotate:adjudication-queue": ("<h1>To adjudicate</h1>",),
    "annotate:question-adjudicate": ('<h1>Adjudicate <span class="qid">{q}</span></h1>',),
    "evaluation:layer-scores": ("<h1>Scores per layer</h1>",),
    "evaluation:layer-scores-csv": ("# collection=demo", "\njudgments,run,question_id,"),
    "evaluation:my-runs": ("<h1>Runs</h1>",),
    "evaluation:run-list": ("<h1>Runs</h1>",),
    "evaluation:scores-progress": ("The scores are ready.",),
    "evaluation:run-list-csv": ("# collection=demo", "# interval=t", "\nrun,owner,"),
    "evaluation:run-upload": ("<h1>Upload a run</h1>",),
    "evaluation:run-detail": ("<h1>Run {run}</h1>",),
    "evaluation:run-withdraw": ("<h1>Withdraw run {run}</h1>",),
    "evaluation:run-replace": ("<h1>Replace the file of run {run}</h1>",),
    "evaluation:run-scores-csv": ("# collection=demo", "\nrun,question_id,"),
    "evaluation:compare": ("<h1>Compare runs</h1>",),
    "evaluation:compare-csv": ("# collection=demo",),
    "evaluation:ranking": ("<h1>System ranking</h1>",),
    "evaluation:ranking-csv": ("# collection=demo", "# interval=t", "\nrun,"),
    "evaluation:ranking-matrix-csv": ("# collection=demo", "# test=holm", "\nrun,mean,"),
    "evaluation:reliability": ("<h1>Reliability</h1>",),
    "evaluation:archive-export": ("<h1>Export archive</h1>",),
    "evaluation:archive-import": ("<h1>Import archive</h1>",),
    "evaluation:reliability-download": ("# table=summary", "\nmetric,gains,swap_threshold"),
    "admin:jsi18n": ("django.gettext",),
}
ADMIN_TITLE = "| Django site admin</title>"
# A correct answer string of the assessor's question that no run returned: the judging
# pages and the export show it; no page a participant or a non-member opens may.
JUDGED_SECRET = "judged-secret-answer"
NEVER_SEE_JUDGMENTS = ("nonmember", "participant", "other")

# Pages whose POST means something only with a body: the body a real form would send.
# A refused role sending it must change nothing.
RUN_FILE = b"EX1-BEATLES\t1\tJohn Lennon\n"


def post_body(name: str, w: dict) -> dict:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return {
        "annotate:question-act": {
            "op": "type",
            "text": "role-matrix-answer",
            "target": "new",
            "level": "A",
        },
        "annotate:question-assign": {
            "questions": [w["question"].pk],
            "assessors": [w["assessor2"].pk],
        },
        "annotate:collection-members": {
            "action": "add",
            "role": "organizer",
            "username": "nonmember",
        },
        "account:token-list": {"name": "role-matrix-token"},
        "evaluation:run-upload": {
            "name": "role-matrix-run",
            "format": "qa",
            "file": SimpleUploadedFile("r.tsv", RUN_FILE),
        },
        "evaluation:run-replace": {"format": "qa", "file": SimpleUploadedFile("r.tsv", RUN_FILE)},
    }.get(name, {})


# -- the world ------------------------------------------------------------------------------
SECRET_RUNS = ("run-secret-af", "run-secret-noaf", "run-secret-other")


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """The default hasher costs 0.25 s a password here, and the world sets ten."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def world(demo):
    """The demo collection with its runs renamed to names no page text contains, a second
    participant with a run of their own, a user without memberships, and another
    collection with its own members."""
    caches["scores"].clear()
    Run.objects.filter(collection=demo, name="AF").update(name="run-secret-af")
    Run.objects.filter(collection=demo, name="noAF").update(name="run-secret-noaf")
    from django.contrib.auth import get_user_model

    User = get_user_model()
    users = {
        "anonymous": None,
        "nonmember": make_user(username="nonmember"),
        "assessor": User.objects.get(username="assessor1"),
        "participant": User.objects.get(username="participant"),
        "other": make_user(username="participant2"),
        "organizer": User.objects.get(username="organizer"),
        "staff": User.objects.get(username="admin"),
    }
    add_member(collection=demo, user=users["other"], role="participant")
    qids = list(demo.questions.order_by("id").values_list("qid", flat=True))
    make_run(
        collection=demo,
        owner=users["other"],
        name="run-secret-other",
        answers={qids[0]: ["Paul McCartney"], qids[1]: ["nothing"]},
    )
    question = (
        Question.objects.filter(collection=demo, assessors=users["assessor"])
        .exclude(assessors=User.objects.get(username="assessor2"))
        .order_by("id")
        .first()
    )
    run = Run.objects.get(collection=demo, name="run-secret-af")
    AnswerString.objects.create(
        question=question,
        text=JUDGED_SECRET,
        key=JUDGED_SECRET,
        synset=question.synsets.order_by("ordinal").first(),
        level=demo.levels.get(code="S"),
        judged_at=timezone.now(),
        judged_by=users["assessor"],
    )
    Group.objects.create(name="judges")
    token = api_token_create(user=users["participant"], name="role-matrix").token
    job = Job.objects.create(
        kind="test",
        label="Report of run-secret-af",
        func="tests.jobs.sample_jobs.make_file",
        user=users["participant"],
        collection=demo,
        status=JobStatus.SUCCEEDED,
        message="Report ready.",
    )
    output = JobOutput.objects.create(
        job=job, name="report.csv", content_type="text/csv", size=9, data=b"a,b\n=1,2\n"
    )
    # the app's job scoring the runs (the page that waits for it polls its progress)
    scores_job = Job.objects.create(
        kind="scores",
        label="Scoring the runs of Demo",
        func="evaluation.score_jobs.score_collection",
        collection=demo,
        status=JobStatus.SUCCEEDED,
        listed=False,
        message="Scores of 3 run(s) computed for the current judgments.",
    )

    elsewhere = make_collection(slug="elsewhere", open_for_submissions=True)
    outsiders = {
        role: make_user(username=f"elsewhere-{role}")
        for role in ("organizer", "assessor", "participant")
    }
    for role, user in outsiders.items():
        add_member(collection=elsewhere, user=user, role=role)
    eq = make_question(collection=elsewhere, qid="E1", text="Elsewhere?")
    eq.assessors.add(outsiders["assessor"])
    erun = make_run(collection=elsewhere, owner=outsiders["participant"], name="run-elsewhere")
    return {
        "collection": demo,
        "users": users,
        "question": question,
        "run": run,
        "assessor2": User.objects.get(username="assessor2"),
        "elsewhere": elsewhere,
        "elsewhere_question": eq,
        "elsewhere_run": erun,
        "token": token,
        "job": job,
        "scores_job": scores_job,
        "output": output,
    }


def admin_object(model_key: str, w: dict) -> str:
    """A realistic object id for an admin page of ``model_key`` (app_model)."""
    objects = {
        "auth_group": Group.objects.get(name="judges"),
        "auth_user": w["users"]["participant"],
        "annotate_collection": w["collection"],
        "annotate_membership": Membership.objects.get(
            collection=w["collection"], user=w["users"]["assessor"]
        ),
        "annotate_level": w["collection"].levels.order_by("order").first(),
        "annotate_question": w["question"],
        "annotate_answersynset": AnswerSynset.objects.filter(question=w["question"]).first()
        or AnswerSynset.objects.first(),
        "annotate_answerstring": AnswerString.objects.filter(question=w["question"]).first(),
        "annotate_judgmentevent": JudgmentEvent.objects.first(),
        "evaluation_run": w["run"],
        "evaluation_runanswer": w["run"].answers.first(),
        "jobs_job": w["job"],
    }
    return str(objects[model_key].pk)


def route_key(name: str | None, route: str) -> str:
    """The table key of a pattern: its name, or for the admin's unnamed object redirect
    (``<model>/<object_id>/``) a name made from its route."""
    if name and not name.endswith(":None"):
        return name
    m = re.fullmatch(r"admin/(\w+)/(\w+)/<path:object_id>/", route)
    return f"admin:{m.group(1)}_{m.group(2)}_redirect" if m else f"?{route}"


def url_for(key: str, route: str, w: dict) -> str:
    """The route with realistic values for its converters."""
    values = {
        "slug": w["collection"].slug,
        "what": "judgments",
        "kind": "summary",
        "pk": str(w["question"].pk),
        "run_id": str(w["run"].pk),
        "token_id": str(w["token"].pk),
        "job_id": str(w["job"].pk),
        "output_id": str(w["output"].pk),
        "uidb64": "MQ",
        "token": "no-such-token",
    }
    if key == "evaluation:scores-progress":
        values["job_id"] = str(w["scores_job"].pk)
    if key == "admin:view_on_site":
        values = {
            "content_type_id": str(ContentType.objects.get_for_model(Collection).pk),
            "object_id": str(w["collection"].pk),
        }
    elif key.startswith("admin:") and "<" in route:
        m = re.fullmatch(r"admin/(\w+)/(\w+)/.*", route)
        oid = admin_object(f"{m.group(1)}_{m.group(2)}", w)
        values = {"object_id": oid, "id": oid}
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values[m.group(1)], route)


def patterns() -> list[tuple[str, str]]:
    """(table key, route) of every pattern but the login pages, the admin's regex
    routes (its app index and catch-all) and the REST API's (tests/api/test_api_matrix.py
    holds the API's matrix: token authentication, JSON statuses)."""
    out = []
    for name, route in walk(get_resolver().url_patterns):
        if route.startswith("^") or "(?P" in route or name in SKIPPED or name.startswith("api:"):
            continue
        out.append((route_key(name, route), route))
    return out


def snapshot() -> str:
    """A digest of everything a page could write (sessions and last_login aside)."""
    from django.contrib.auth import get_user_model

    h = hashlib.sha256()
    for qs in (
        Collection.objects.values_list(),
        Level.objects.values_list(),
        Membership.objects.values_list(),
        Question.objects.values_list(),
        Question.assessors.through.objects.values_list(),
        AnswerSynset.objects.values_list(),
        AnswerString.objects.values_list(),
        JudgmentEvent.objects.values_list(),
        Run.objects.values_list(),
        RunAnswer.objects.values_list(),
        Group.objects.values_list(),
        ApiToken.objects.values_list("pk", "user_id", "name", "digest", "revoked_at"),
        get_user_model().objects.values_list(
            "pk", "username", "password", "is_staff", "is_superuser", "is_active"
        ),
    ):
        h.update(repr(list(qs.order_by("pk"))).encode())
    return h.hexdigest()


def classify(response) -> str:
    status = response.status_code
    assert status < 500, f"server error {status}"
    if status in (301, 302, 303, 307, 308):
        location = response.headers["Location"]
        return "login" if re.search(r"/(accounts|admin)/login/", location) else "ok"
    if 200 <= status < 300:
        return "ok"
    return str(status)


def request(w: dict, role: str, method: str, url: str, data: dict):
    client = Client()
    user = w["users"][role]
    if user is not None:
        client.force_login(user)
    if method == "GET":
        return client.get(url)
    return client.post(url, data)


def page_problems(w: dict, key: str, role: str, url: str, response) -> list[str]:
    """What is wrong with the body of a GET answered 200: the page's text missing (see
    PAGE_TEXT), or a judged answer shown to a role that never sees judgments."""
    body = (
        b"".join(response.streaming_content) if response.streaming else response.content
    ).decode(errors="replace")
    if key in PAGE_TEXT:
        wanted = [
            t.format(
                c=escape(w["collection"].name),
                q=escape(w["question"].qid),
                run=escape(w["run"].name),
                secret=JUDGED_SECRET,
            )
            for t in PAGE_TEXT[key]
        ]
    elif key.startswith("admin:"):
        wanted = [ADMIN_TITLE]
    else:
        return [f"GET {url} as {role}: 200, but {key} has no entry in PAGE_TEXT"]
    problems = [
        f"GET {url} as {role}: the page does not show {t!r}" for t in wanted if t not in body
    ]
    if role in NEVER_SEE_JUDGMENTS and JUDGED_SECRET in body:
        problems.append(f"GET {url} as {role}: shows a judged answer")
    return problems


def observe(w: dict, key: str, url: str) -> tuple[dict[str, list[str]], list[str]]:
    """The outcome class per method and role, and the problems: requests that wrote
    although their observed class does not allow it, pages without their text."""
    seen: dict[str, list[str]] = {}
    bad_writes = []
    expected = EXPECTED.get(key)
    for method in ("GET", "POST"):
        seen[method] = []
        for i, role in enumerate(ROLES):
            data = post_body(key, w) if method == "POST" else {}
            with transaction.atomic():
                before = snapshot()
                response = request(w, role, method, url, data)
                got = classify(response)
                if method == "GET" and response.status_code == 200:
                    bad_writes += page_problems(w, key, role, url, response)
                wrote = snapshot() != before
                transaction.set_rollback(True)
            want = expected[method].split()[i] if expected else got
            if got == "ok" and want == "write":
                got = "write"
            seen[method].append(got)
            if wrote and got != "write":
                bad_writes.append(f"{method} {url} as {role}: changed the database")
            if data and want == "write" and got == "write" and not wrote:
                # the body must be one that writes, or the refusals above prove nothing
                bad_writes.append(f"{method} {url} as {role}: the body wrote nothing")
    return seen, bad_writes


def test_the_table_covers_every_pattern_and_only_those():
    keys = {key for key, _ in patterns()}
    missing = sorted(keys - EXPECTED.keys())
    assert not missing, (
        "URL patterns missing from EXPECTED in tests/test_role_matrix.py; "
        f"classify them per role: {missing}"
    )
    stale = sorted(EXPECTED.keys() - keys)
    assert not stale, f"EXPECTED names patterns that no longer exist: {stale}"
    for key, row in EXPECTED.items():
        assert set(row) == {"GET", "POST"}, key
        for classes in row.values():
            assert len(classes.split()) == len(ROLES), key
            assert set(classes.split()) <= {"ok", "write", "login", "403", "404", "405"}, key


@pytest.mark.parametrize(("key", "route"), patterns(), ids=[k for k, _ in patterns()])
def test_role_matrix(world, key, route):
    url = url_for(key, route, world)
    seen, bad_writes = observe(world, key, url)
    assert key in EXPECTED, (
        f"{key} ({route}) is not in EXPECTED; observed (check before copying):\n"
        f'    "{key}": {{"GET": "{" ".join(seen["GET"])}", "POST": "{" ".join(seen["POST"])}"}},'
    )
    diffs = [
        f"{method} {url} as {role}: expected {want}, got {got}"
        for method in ("GET", "POST")
        for role, want, got in zip(ROLES, EXPECTED[key][method].split(), seen[method], strict=True)
        if want != got
    ]
    assert not diffs + bad_writes, "\n".join(diffs + bad_writes)


# -- leaks --------------------------------------------------------------------------------
def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_other_participants_runs_stay_hidden_until_the_leaderboard_is_published(world):
    demo, u = world["collection"], world["users"]
    mine = Run.objects.get(collection=demo, name="run-secret-af")
    theirs = Run.objects.get(collection=demo, name="run-secret-other")
    client = login(u["participant"])
    base = f"/collections/{demo.slug}"
    for url in (
        "/runs/",
        f"{base}/runs/",
        f"{base}/runs.csv",
        f"{base}/ranking/",
        f"{base}/ranking.csv",
        f"{base}/ranking-matrix.csv",
        f"{base}/compare/",
    ):
        body = client.get(url).content.decode()
        assert "run-secret-af" in body and "run-secret-other" not in body, url
    refused = (
        f"{base}/runs/{theirs.pk}/",
        f"{base}/runs/{theirs.pk}/scores.csv",
        f"{base}/compare/?a={mine.pk}&b={theirs.pk}",
        f"{base}/compare.csv?a={mine.pk}&b={theirs.pk}",
        f"{base}/compare/?a={theirs.pk}&b={mine.pk}",
    )
    for url in refused:
        assert client.get(url).status_code == 403, url
    # the other participant sees neither AF run
    other = login(u["other"])
    for url in ("/runs/", f"{base}/runs/", f"{base}/ranking.csv", f"{base}/ranking-matrix.csv"):
        body = other.get(url).content.decode()
        assert "run-secret-other" in body and "run-secret-af" not in body, url
    assert other.get(f"{base}/runs/{mine.pk}/").status_code == 403

    Collection.objects.filter(pk=demo.pk).update(leaderboard_published=True)
    for url in refused:
        response = client.get(url)
        assert response.status_code == 200, url
        assert "run-secret-other" in response.content.decode(), url  # the run itself
    for url in (
        f"{base}/runs/",
        f"{base}/runs.csv",
        f"{base}/ranking/",
        f"{base}/ranking.csv",
        f"{base}/ranking-matrix.csv",
    ):
        body = client.get(url).content.decode()
        assert "run-secret-af" in body and "run-secret-other" in body, url
    # publishing shows runs to participants, not to assessors
    assert login(u["assessor"]).get(f"{base}/runs/{theirs.pk}/").status_code == 403


SCORE_PAGES = (
    "/runs/",
    "/runs.csv",
    "/runs/{run}/",
    "/runs/{run}/scores.csv",
    "/compare/",
    "/compare.csv",
    "/compare/?a={run}&b={other}",
    "/compare.csv?a={run}&b={other}",
    "/ranking/",
    "/ranking.csv",
    "/ranking-matrix.csv",
)


@pytest.mark.parametrize("published", [False, True])
def test_assessors_never_get_scores(world, published):
    demo = world["collection"]
    Collection.objects.filter(pk=demo.pk).update(leaderboard_published=published)
    other = Run.objects.get(collection=demo, name="run-secret-other")
    client = login(world["users"]["assessor"])
    for page in SCORE_PAGES:
        url = f"/collections/{demo.slug}" + page.format(run=world["run"].pk, other=other.pk)
        assert client.get(url).status_code == 403, url


def assessor_urls(w: dict) -> list[str]:
    """Every page the assessor may GET according to EXPECTED, every question of the
    collection (assigned or not), list filters and the htmx partials."""
    i = ROLES.index("assessor")
    urls = [
        url_for(key, route, w)
        for key, route in patterns()
        if EXPECTED[key]["GET"].split()[i] == "ok" and key != "favicon"
    ]  # a static file
    base = f"/collections/{w['collection'].slug}"
    urls += [
        f"/questions/{pk}/judge/" for pk in w["collection"].questions.values_list("pk", flat=True)
    ]
    urls += [
        f"{base}/questions/?unjudged=1",
        f"{base}/questions/?q=run",
        f"{base}/questions/?status=todo",
        "/queue/next/?collection=demo",
    ]
    return urls


@pytest.mark.slow
def test_run_names_never_reach_an_assessor(world):
    """Not in any page an assessor can open, before or after the runs are pooled (the
    pool orders candidates by how many runs returned them, never naming the runs)."""
    demo, u = world["collection"], world["users"]
    organizer = login(u["organizer"])
    client = login(u["assessor"])

    def check():
        for url in assessor_urls(world):
            for headers in ({}, {"HX-Request": "true"}):
                response = client.get(url, headers=headers, follow=True)
                assert response.status_code == 200, (url, response.status_code)
                body = response.content.decode()
                for name in SECRET_RUNS:
                    assert name not in body, f"{name} shown to the assessor on {url}"

    check()
    for run in Run.objects.filter(collection=demo):
        response = organizer.post(f"/collections/{demo.slug}/runs/{run.pk}/pool/")
        assert response.status_code == 302
    assert AnswerString.objects.filter(question__collection=demo, source="pool").exists()
    check()


def test_run_names_never_reach_an_assessor_judging_in_layers(world):
    """The same on the pages of several assessors per question: the assessor's layer in
    the judging workspace (page, htmx fragment of an operation), the adjudication queue and
    page as a named adjudicator, the question list and queue showing layers."""
    from django.contrib.auth import get_user_model

    from annotate import layer_selectors, layers

    demo, u = world["collection"], world["users"]
    other = get_user_model().objects.get(username="assessor2")
    third = make_user(username="assessor3")
    add_member(collection=demo, user=third, role="assessor")
    client = login(u["assessor"])
    with_runs = list(
        Question.objects.filter(collection=demo, run_answers__isnull=False).distinct()[:3]
    )
    judged, open_, adjudicated = with_runs
    layers.layers_request(
        collection=demo,
        questions=[judged, open_],
        assessors=[u["assessor"], other],
        by=u["organizer"],
    )
    # the named adjudicator of a question judges none of its layers
    layers.layers_request(
        collection=demo,
        questions=[adjudicated],
        assessors=[other, third],
        by=u["organizer"],
        adjudicator=u["assessor"],
    )
    # the first and third questions: every layer done
    for q, users in ((judged, (u["assessor"], other)), (adjudicated, (other, third))):
        for user in users:
            layer = layer_selectors.layer_for(question=q, user=user)
            for s in q.strings.all():
                layers.layer_judge(layer=layer, string=s.pk, new_group=user == other, by=user)
            layers.layer_mark_done(layer=layer, by=user)
    base = f"/collections/{demo.slug}"
    urls = [
        f"/questions/{judged.pk}/judge/",
        f"/questions/{open_.pk}/judge/",
        f"/questions/{adjudicated.pk}/adjudicate/",
        "/queue/adjudicate/",
        "/queue/",
        f"{base}/questions/",
    ]
    bodies = []
    for url in urls:
        for headers in ({}, {"HX-Request": "true"}):
            response = client.get(url, headers=headers, follow=True)
            assert response.status_code == 200, (url, response.status_code)
            bodies.append((url, response.content.decode()))
    s = open_.strings.first()
    response = client.post(
        f"/questions/{open_.pk}/layer/act/",
        {"op": "new", "string": s.pk, "level": ""},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    bodies.append(("layer act", response.content.decode()))
    assert "<h1>Adjudicate" in dict(bodies)[f"/questions/{adjudicated.pk}/adjudicate/"]
    assert 'id="layer-note"' in dict(bodies)[f"/questions/{open_.pk}/judge/"]
    assert 'id="layer-compare"' in dict(bodies)[f"/questions/{judged.pk}/judge/"]
    for url, body in bodies:
        for name in SECRET_RUNS:
            assert name not in body, f"{name} shown to the assessor on {url}"


def test_members_of_another_collection_get_403(world):
    demo, elsewhere = world["collection"], world["elsewhere"]
    eq, erun = world["elsewhere_question"], world["elsewhere_run"]
    pages = [
        f"/collections/{elsewhere.slug}/{p}"
        for p in (
            "",
            "edit/",
            "members/",
            "import/",
            "export/judgments.csv",
            "questions/",
            "runs/",
            "runs/upload/",
            f"runs/{erun.pk}/",
            f"runs/{erun.pk}/scores.csv",
            "compare/",
            "compare.csv",
            "runs.csv",
            "ranking/",
            "ranking.csv",
            "ranking-matrix.csv",
        )
    ] + [f"/questions/{eq.pk}/judge/"]
    posts = [
        f"/collections/{elsewhere.slug}/{p}"
        for p in (
            "edit/",
            "members/",
            "import/",
            "import/confirm/",
            "questions/assign/",
            "runs/upload/",
            f"runs/{erun.pk}/pool/",
        )
    ] + [f"/questions/{eq.pk}/act/"]
    for role in ("organizer", "assessor", "participant", "other"):
        client = login(world["users"][role])
        for url in pages:
            assert client.get(url).status_code == 403, (role, url)
        before = snapshot()
        for url in posts:
            assert client.post(url, {"op": "type", "text": "x"}).status_code == 403, (role, url)
        assert snapshot() == before
        for url in ("/collections/", "/runs/", "/queue/"):
            body = client.get(url).content.decode()
            assert elsewhere.name not in body and "run-elsewhere" not in body, (role, url)
    # and the other way round
    client = login(user_named("elsewhere-organizer"))
    assert client.get(f"/collections/{demo.slug}/").status_code == 403
    assert client.get(f"/questions/{world['question'].pk}/judge/").status_code == 403
    assert client.get(f"/collections/{demo.slug}/runs/{world['run'].pk}/").status_code == 403


def user_named(username: str):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)
