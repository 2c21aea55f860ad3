from django.urls import path

from . import views

app_name = "annotate"

urlpatterns = [
    path("collections/", views.collection_list, name="collection-list"),
    path("collections/new/", views.collection_create, name="collection-create"),
    path("collections/<slug:slug>/edit/", views.collection_edit, name="collection-edit"),
    path("collections/<slug:slug>/members/", views.collection_members,
         name="collection-members"),
    path("collections/<slug:slug>/import/", views.collection_import_page,
         name="collection-import"),
    path("collections/<slug:slug>/import/confirm/", views.collection_import_confirm,
         name="collection-import-confirm"),
    path("collections/<slug:slug>/export/<str:what>.csv", views.collection_export,
         name="collection-export"),
    path("collections/<slug:slug>/", views.collection_detail, name="collection-detail"),
    path("collections/<slug:slug>/dashboard/", views.collection_dashboard_page,
         name="collection-dashboard"),
    path("collections/<slug:slug>/questions/", views.question_list, name="question-list"),
    path("collections/<slug:slug>/questions/assign/", views.question_assign,
         name="question-assign"),
    path("questions/<int:pk>/judge/", views.question_judge, name="question-judge"),
    path("questions/<int:pk>/act/", views.question_act, name="question-act"),
    path("queue/", views.my_queue, name="my-queue"),
    path("queue/next/", views.next_to_judge, name="next-question"),
]
