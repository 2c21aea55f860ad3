from django.urls import path

from . import views

app_name = "jobs"

urlpatterns = [
    path("", views.job_list, name="job-list"),
    path("<int:job_id>/", views.job_detail, name="job-detail"),
    path("<int:job_id>/status/", views.job_status, name="job-status"),
    path("<int:job_id>/cancel/", views.job_cancel, name="job-cancel"),
    path("<int:job_id>/files/<int:output_id>/", views.job_output, name="job-output"),
]
