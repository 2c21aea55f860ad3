from django.urls import path

from . import views

app_name = "annotate"

urlpatterns = [
    path("collections/", views.collection_list, name="collection-list"),
    path("collections/<slug:slug>/", views.collection_detail, name="collection-detail"),
    path("queue/", views.my_queue, name="my-queue"),
]
