"""The pages' score CSVs at full precision (``precision=full``, linked next to each
download): every float written as ``repr``, as ``qa-score --precision full`` writes it, the
same numbers as the readable file's 6 decimals and as the API's full-precision JSON."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from evaluation.metrics.csvio import read_csv
from evaluation.models import Run

pytestmark = pytest.mark.django_db


def _login(client, username="organizer"):
    client.force_login(get_user_model().objects.get(username=username))


def _downloads(demo):
    runs = {r.name: r.pk for r in Run.objects.filter(collection=demo)}
    return {
        "runs": ("/collections/demo/runs/", "/collections/demo/runs.csv"),
        "scores": (
            f"/collections/demo/runs/{runs['AF']}/",
            f"/collections/demo/runs/{runs['AF']}/scores.csv",
        ),
        "compare": (
            f"/collections/demo/compare/?a={runs['noAF']}&b={runs['AF']}",
            f"/collections/demo/compare.csv?a={runs['noAF']}&b={runs['AF']}",
        ),
        "ranking": ("/collections/demo/ranking/", "/collections/demo/ranking.csv"),
        "matrix": ("/collections/demo/ranking/", "/collections/demo/ranking-matrix.csv"),
    }


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return "." in text or "e" in text


@pytest.mark.parametrize("name", ["runs", "scores", "compare", "ranking", "matrix"])
def test_full_precision_writes_repr_of_the_numbers_the_readable_file_rounds(client, demo, name):
    _login(client)
    _, csv_url = _downloads(demo)[name]
    sep = "&" if "?" in csv_url else "?"
    readable = client.get(csv_url)
    full = client.get(f"{csv_url}{sep}precision=full")
    assert readable.status_code == full.status_code == 200
    pre_r, head_r, rows_r = read_csv(readable.content.decode())
    pre_f, head_f, rows_f = read_csv(full.content.decode())
    assert "precision" not in pre_r and pre_f.pop("precision") == "full"
    assert (pre_r, head_r) == (pre_f, head_f)
    assert len(rows_r) == len(rows_f) > 0
    longer = 0
    for row_r, row_f in zip(rows_r, rows_f, strict=True):
        for r, f in zip(row_r, row_f, strict=True):
            if r == f:
                continue
            # a float: repr in full (the shortest text of the double), 6 decimals readable
            assert _is_float(f) and repr(float(f)) == f, (r, f)
            assert format(float(f), ".6f") == r, (r, f)
            longer += len(f.partition(".")[2]) > 6
    assert longer, "no value needs more than 6 decimals: the test proves nothing"


def test_full_precision_scores_are_the_api_doubles(client, demo):
    """The run's scores CSV and the API's ``precision=full`` give the same doubles."""
    from api.services import api_token_create

    user = get_user_model().objects.get(username="participant")
    run = Run.objects.get(collection=demo, name="AF")
    token = api_token_create(user=user, name="t").secret
    api = client.get(
        f"/api/collections/demo/runs/{run.pk}/scores",
        {"metric": ["q_measure", "ap"], "precision": "full"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    _login(client, "participant")
    _, header, rows = read_csv(
        client.get(
            f"/collections/demo/runs/{run.pk}/scores.csv",
            {"metric": ["q_measure", "ap"], "precision": "full"},
        ).content.decode()
    )
    by_q = {r[1]: dict(zip(header, r, strict=True)) for r in rows}
    for q in api["questions"]:
        for m in ("q_measure", "ap"):
            assert float(by_q[q["question_id"]][m]) == q["scores"][m]
            assert by_q[q["question_id"]][m] == repr(q["scores"][m])
    for m in ("q_measure", "ap"):
        assert by_q["all"][m] == repr(api["means"][m])


def test_qa_score_and_the_page_write_full_precision_alike():
    """One formatting, the shortest repr: qa-score's CSV cells and the page writer's."""
    import numpy as np

    from evaluation.metrics.csvio import cell
    from evaluation.metrics.report import _texts

    values = np.array([0.1 + 0.2, 2 / 3, 1.0, 0.0, 1e-17, 0.8062381553398058])
    assert list(_texts(values, None)) == [cell(float(v)) for v in values]


@pytest.mark.parametrize("name", ["runs", "scores", "compare", "ranking", "matrix"])
def test_each_page_links_its_full_precision_download(client, demo, name):
    _login(client)
    page_url, csv_url = _downloads(demo)[name]
    body = client.get(page_url).content.decode()
    path = csv_url.partition("?")[0]
    links = [part for part in body.split('href="')[1:] if part.startswith(path)]
    full = [link for link in links if "precision=full" in link.partition('"')[0]]
    assert full, (name, links)
    assert ">full precision</a>" in full[0]
