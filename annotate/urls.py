from django.urls import path

from . import language, layer_views, views

app_name = "annotate"

urlpatterns = [
    path("language/", language.language_set, name="language-set"),
    path("collections/", views.collection_list, name="collection-list"),
    path("collections/new/", views.collection_create, name="collection-create"),
    path("collections/<slug:slug>/edit/", views.collection_edit, name="collection-edit"),
    path("collections/<slug:slug>/members/", views.collection_members, name="collection-members"),
    path("collections/<slug:slug>/import/", views.collection_import_page, name="collection-import"),
    path(
        "collections/<slug:slug>/import/confirm/",
        views.collection_import_confirm,
        name="collection-import-confirm",
    ),
    path(
        "collections/<slug:slug>/export/<str:what>.csv",
        views.collection_export,
        name="collection-export",
    ),
    path("collections/<slug:slug>/", views.collection_detail, name="collection-detail"),
    path(
        "collections/<slug:slug>/dashboard/",
        views.collection_dashboard_page,
        name="collection-dashboard",
    ),
    path("collections/<slug:slug>/questions/", views.question_list, name="question-list"),
    path(
        "collections/<slug:slug>/questions/assign/", views.question_assign, name="question-assign"
    ),
    path("questions/<int:pk>/judge/", views.question_judge, name="question-judge"),
    path("questions/<int:pk>/act/", views.question_act, name="question-act"),
    path("queue/", views.my_queue, name="my-queue"),
    path("queue/next/", views.next_to_judge, name="next-question"),
    # several assessors per question (annotate/layer_views.py)
    path(
        "collections/<slug:slug>/agreement/",
        layer_views.collection_agreement,
        name="collection-agreement",
    ),
    path(
        "collections/<slug:slug>/layers/request/",
        layer_views.collection_layers_request,
        name="collection-layers-request",
    ),
    path(
        "collections/<slug:slug>/layers.csv",
        layer_views.collection_layers_csv,
        name="collection-layers-csv",
    ),
    path(
        "collections/<slug:slug>/layers/import/",
        layer_views.collection_layers_import,
        name="collection-layers-import",
    ),
    path("queue/adjudicate/", layer_views.adjudication_queue, name="adjudication-queue"),
    path(
        "questions/<int:pk>/adjudicate/",
        layer_views.question_adjudicate,
        name="question-adjudicate",
    ),
    path(
        "questions/<int:pk>/adjudicate/act/",
        layer_views.question_adjudicate_act,
        name="question-adjudicate-act",
    ),
    path("questions/<int:pk>/layer/", layer_views.question_layer, name="question-layer"),
    path(
        "questions/<int:pk>/layer/act/", layer_views.question_layer_act, name="question-layer-act"
    ),
]
