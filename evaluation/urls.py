from django.urls import path

from . import views

app_name = "evaluation"

urlpatterns = [
    path("runs/", views.my_runs, name="my-runs"),
    path("collections/<slug:slug>/runs/", views.run_list, name="run-list"),
]
