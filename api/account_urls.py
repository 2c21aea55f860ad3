from django.urls import path

from . import views

app_name = "account"

urlpatterns = [
    path("tokens/", views.token_list, name="token-list"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke, name="token-revoke"),
]
