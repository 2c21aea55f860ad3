from django.urls import path

from . import (
    archive_views,
    compare_views,
    layer_score_views,
    matching_views,
    ranking_views,
    reliability_views,
    run_views,
    score_job_views,
)

app_name = "evaluation"

urlpatterns = [
    path("runs/", run_views.my_runs, name="my-runs"),
    path("collections/<slug:slug>/runs/", run_views.run_list, name="run-list"),
    path(
        "collections/<slug:slug>/scores/jobs/<int:job_id>/",
        score_job_views.scores_progress,
        name="scores-progress",
    ),
    path("collections/<slug:slug>/runs.csv", run_views.run_list_csv, name="run-list-csv"),
    path("collections/<slug:slug>/runs/upload/", run_views.run_upload, name="run-upload"),
    path("collections/<slug:slug>/runs/pool/", run_views.run_pool_all, name="run-pool-all"),
    path("collections/<slug:slug>/runs/<int:run_id>/", run_views.run_detail, name="run-detail"),
    path(
        "collections/<slug:slug>/runs/<int:run_id>/scores.csv",
        run_views.run_scores_csv,
        name="run-scores-csv",
    ),
    path(
        "collections/<slug:slug>/runs/<int:run_id>/withdraw/",
        run_views.run_withdraw,
        name="run-withdraw",
    ),
    path(
        "collections/<slug:slug>/runs/<int:run_id>/replace/",
        run_views.run_replace,
        name="run-replace",
    ),
    path("collections/<slug:slug>/runs/<int:run_id>/pool/", run_views.run_pool, name="run-pool"),
    path(
        "collections/<slug:slug>/matching-mode/",
        matching_views.collection_matching_mode,
        name="collection-matching-mode",
    ),
    path("collections/<slug:slug>/compare/", compare_views.compare, name="compare"),
    path("collections/<slug:slug>/compare.csv", compare_views.compare_csv, name="compare-csv"),
    path("collections/<slug:slug>/ranking/", ranking_views.ranking, name="ranking"),
    path("collections/<slug:slug>/ranking.csv", ranking_views.ranking_csv, name="ranking-csv"),
    path(
        "collections/<slug:slug>/ranking-matrix.csv",
        ranking_views.ranking_matrix_csv,
        name="ranking-matrix-csv",
    ),
    path(
        "collections/<slug:slug>/reliability/",
        reliability_views.collection_reliability,
        name="reliability",
    ),
    path(
        "collections/<slug:slug>/reliability/<str:kind>.csv",
        reliability_views.collection_reliability_download,
        name="reliability-download",
    ),
    # scores per assessor layer (evaluation/layer_score_views.py)
    path(
        "collections/<slug:slug>/layer-scores/",
        layer_score_views.collection_layer_scores,
        name="layer-scores",
    ),
    path(
        "collections/<slug:slug>/layer-scores.csv",
        layer_score_views.collection_layer_scores_csv,
        name="layer-scores-csv",
    ),
]

# the collection archive as background jobs (evaluation/archive_views.py)
urlpatterns += [
    path(
        "collections/<slug:slug>/archive/",
        archive_views.archive_export,
        name="archive-export",
    ),
    path("archives/import/", archive_views.archive_import, name="archive-import"),
]

# the reliability report computed by a background job (evaluation/reliability_views.py)
urlpatterns += [
    path(
        "collections/<slug:slug>/reliability/compute/",
        reliability_views.collection_reliability_compute,
        name="reliability-compute",
    ),
]
