"""A run import killed mid-way (kill -9 while it writes its answers: its COPY has written
some of them in its transaction) leaves no partial run; the same file then imports
completely."""

import os
import signal
import subprocess
import sys
import time

import pytest
from django.db import connection

from annotate.models import Question
from evaluation.models import Run, RunAnswer
from tests.factories import add_member, make_collection, make_user

from .helpers import ROOT, app_env

pytestmark = [
    pytest.mark.postgres(reason="fault tests need PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

# 100,000 answers: one COPY (config.bulk.insert_rows) long enough to be caught mid-way
N_QUESTIONS, L = 20_000, 5


def writing_backend(dbname: str) -> int | None:
    """The backend pid whose COPY of run answers into ``dbname`` has written some rows
    (PostgreSQL's pg_stat_progress_copy), if any."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT a.pid FROM pg_stat_activity a JOIN pg_stat_progress_copy p "
            "ON p.pid = a.pid WHERE a.datname = %s AND a.state = 'active' "
            "AND a.query LIKE 'COPY \"evaluation_runanswer\"%%' AND p.tuples_processed > 0 "
            "AND a.pid <> pg_backend_pid()",
            [dbname],
        )
        row = cur.fetchone()
        return row[0] if row else None


def backend_alive(pid: int) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return cur.fetchone()[0] > 0


def test_import_run_killed_while_writing_leaves_no_partial_run(tmp_path):
    c = make_collection(slug="faults", open_for_submissions=True)
    owner = make_user(username="owner")
    add_member(collection=c, user=owner, role="participant")
    Question.objects.bulk_create(
        Question(collection=c, qid=f"q{i}", text="?") for i in range(N_QUESTIONS)
    )
    run_file = tmp_path / "big.tsv"
    run_file.write_text(
        "".join(f"q{i}\t{r}\tanswer {i} {r}\n" for i in range(N_QUESTIONS) for r in range(1, L + 1))
    )
    cmd = [
        sys.executable,
        "manage.py",
        "import_run",
        str(run_file),
        "--collection",
        "faults",
        "--owner",
        "owner",
        "--name",
        "big",
    ]
    dbname = connection.settings_dict["NAME"]

    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=app_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    # kill it while its COPY streams the answers: the rows written so far are in its
    # transaction, and must go with it
    backend = None
    deadline = time.monotonic() + 60
    while backend is None and proc.poll() is None and time.monotonic() < deadline:
        backend = writing_backend(dbname)
        time.sleep(0.002)
    assert backend is not None, "never saw the import's COPY write answers: " + (
        proc.communicate()[0].decode()[-500:] if proc.poll() is not None else "timeout"
    )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL

    # the server notices the lost client and rolls its transaction back
    deadline = time.monotonic() + 20
    while backend_alive(backend) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not backend_alive(backend)
    assert Run.objects.count() == 0
    assert RunAnswer.objects.count() == 0

    # nothing left behind blocks a new import of the same run (its name is free)
    done = subprocess.run(cmd, cwd=ROOT, env=app_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    run = Run.objects.get()
    assert (run.name, run.answers.count()) == ("big", N_QUESTIONS * L)
