from django.urls import path

from . import layer_score_views, reliability_views, views

app_name = "evaluation"

urlpatterns = [
    path("runs/", views.my_runs, name="my-runs"),
    path("collections/<slug:slug>/runs/", views.run_list, name="run-list"),
    path("collections/<slug:slug>/runs.csv", views.run_list_csv, name="run-list-csv"),
    path("collections/<slug:slug>/runs/upload/", views.run_upload, name="run-upload"),
    path("collections/<slug:slug>/runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path(
        "collections/<slug:slug>/runs/<int:run_id>/scores.csv",
        views.run_scores_csv,
        name="run-scores-csv",
    ),
    path(
        "collections/<slug:slug>/runs/<int:run_id>/withdraw/",
        views.run_withdraw,
        name="run-withdraw",
    ),
    path(
        "collections/<slug:slug>/runs/<int:run_id>/replace/", views.run_replace, name="run-replace"
    ),
    path("collections/<slug:slug>/runs/<int:run_id>/pool/", views.run_pool, name="run-pool"),
    path("collections/<slug:slug>/compare/", views.compare, name="compare"),
    path("collections/<slug:slug>/compare.csv", views.compare_csv, name="compare-csv"),
    path("collections/<slug:slug>/ranking/", views.ranking, name="ranking"),
    path("collections/<slug:slug>/ranking.csv", views.ranking_csv, name="ranking-csv"),
    path(
        "collections/<slug:slug>/ranking-matrix.csv",
        views.ranking_matrix_csv,
        name="ranking-matrix-csv",
    ),
    path(
        "collections/<slug:slug>/reliability/",
        reliability_views.collection_reliability,
        name="reliability",
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
