"""One range for every score parameter, the engine's (``gains.check_parameters``, the gain
profile's ``resolve``), on the pages, their CSV downloads, the API and qa-score; and a CSV
download with an invalid parameter is refused (400 with the reason), never computed with
the defaults instead."""

import html

import pytest
from django.contrib.auth import get_user_model

from api.services import api_token_create
from evaluation.metrics.csvio import read_csv
from evaluation.metrics.gains import parse_gains
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db


def test_a_gain_profile_naming_an_unknown_level_is_refused():
    profile = parse_gains("S=4,A=2,B=1,C=0")
    with pytest.raises(ValueError, match=r"names level\(s\) C that the judgments do not have"):
        profile.resolve(("S", "A", "B"), (3, 2, 1))
    assert list(profile.resolve(("S", "A", "B", "C"), (3, 2, 1, 0))) == [4, 2, 1, 0]
    with pytest.raises(ValueError, match=r"gives no gain for level\(s\) B"):
        parse_gains("S=4,A=2").resolve(("S", "A", "B"), (3, 2, 1))


@pytest.fixture
def organizer(client, demo):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="organizer"))
    return client


def test_the_page_takes_rbp_p_as_the_api_and_qa_score_do(organizer, demo):
    af = demo.runs.get(name="AF")
    url = f"/collections/demo/runs/{af.pk}/"
    page = organizer.get(url, {"metric": "rbp", "rbp_p": "0.995"})
    assert page.status_code == 200
    assert "out of range" not in html.unescape(page.content.decode())
    csv = organizer.get(
        f"/collections/demo/runs/{af.pk}/scores.csv", {"metric": "rbp", "rbp_p": "0.995"}
    )
    assert csv.status_code == 200
    preamble, header, _ = read_csv(csv.content.decode())
    assert preamble["rbp_p"] == "0.995" and header[4:] == ["rbp"]
    page = organizer.get(url, {"metric": "rbp", "rbp_p": "1"})
    assert "the RBP persistence p 1.0 is out of range: it must be in [0, 1)" in (
        html.unescape(page.content.decode())
    )


# the downloads that also read the interval and pair-test parameters
WITH_TESTS = (
    "/collections/demo/runs.csv",
    "/collections/demo/ranking.csv",
    "/collections/demo/ranking-matrix.csv",
)


DOWNLOADS = (
    "/collections/demo/runs/{af}/scores.csv",
    "/collections/demo/runs.csv",
    "/collections/demo/compare.csv?a={noaf}&b={af}",
    "/collections/demo/ranking.csv",
    "/collections/demo/ranking-matrix.csv",
    "/collections/demo/layer-scores.csv",
)
SCORE_PARAMETERS = [
    ({"metric": "rbp", "rbp_p": "1.5"}, "rbp_p: the RBP persistence p 1.5 is out of range"),
    ({"metric": "rbp", "beta": "-1"}, "beta: beta -1.0 is out of range"),
    ({"metric": "nope"}, "metric: Select a valid choice."),
    (
        {"gains": "custom", "custom_gains": "S=4,A=2,B=1,C=0"},
        "names level(s) C that the judgments do not have (their levels: S, A, B)",
    ),
]
TEST_PARAMETERS = [({"interval": "nope"}, "interval: Select a valid choice.")]


@pytest.mark.parametrize(
    ("download", "params", "reason"),
    # every download reads the score parameters; those in WITH_TESTS the test ones too
    [(d, p, r) for d in DOWNLOADS for p, r in SCORE_PARAMETERS]
    + [(d, p, r) for d in WITH_TESTS for p, r in TEST_PARAMETERS],
)
def test_a_download_with_an_invalid_parameter_is_400_with_the_reason(
    organizer, demo, download, params, reason
):
    url = download.format(af=demo.runs.get(name="AF").pk, noaf=demo.runs.get(name="noAF").pk)
    path, _, query = url.partition("?")
    extra = dict(p.split("=") for p in query.split("&")) if query else {}
    response = organizer.get(path, {**extra, **params})
    assert response.status_code == 400, (url, params)
    assert not response["Content-Type"].startswith("text/csv")
    assert reason in html.unescape(response.content.decode())


def test_the_reliability_download_with_an_invalid_parameter_is_400(organizer):
    response = organizer.get("/collections/demo/reliability/summary.csv", {"trials": "0"})
    assert response.status_code == 400
    assert "trials: " in html.unescape(response.content.decode())
    assert organizer.get("/collections/demo/reliability/", {"trials": "0"}).status_code == 200
    # a link of the old form (the page with ?download=) ends at the same refusal
    old = organizer.get(
        "/collections/demo/reliability/", {"download": "summary", "trials": "0"}, follow=True
    )
    assert old.status_code == 400 and "trials: " in html.unescape(old.content.decode())


@pytest.mark.parametrize(("params", "reason"), SCORE_PARAMETERS)
def test_the_api_refuses_a_parameter_with_the_words_of_the_download(
    organizer, demo, params, reason
):
    """One form reads the score parameters of the pages, their downloads and the API: a
    refused parameter has one message, the 400's reason and the 422's detail."""
    af = demo.runs.get(name="AF").pk
    download = organizer.get(f"/collections/demo/runs/{af}/scores.csv", params)
    token = api_token_create(user=get_user_model().objects.get(username="organizer"), name="t")
    api = ApiClient(token.secret).get(f"/api/collections/demo/runs/{af}/scores", **params)
    assert download.status_code == 400 and api.status_code == 422
    detail = api.json()["detail"]
    assert reason in detail
    assert f"Invalid parameters: {detail}" in html.unescape(download.content.decode())
