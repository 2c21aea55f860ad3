"""The user's own "API tokens" page: create (the secret is shown once), list, revoke."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from config.htmx import redirect_to

from .forms import TokenCreateForm
from .models import ApiToken
from .services import TooManyTokens, api_token_create, api_token_revoke


@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    created = None
    if request.method == "POST":
        form = TokenCreateForm(request.POST)
        if form.is_valid():
            try:
                created = api_token_create(user=request.user, name=form.cleaned_data["name"])
            except TooManyTokens as e:
                form.add_error(None, str(e))
            else:
                form = TokenCreateForm()
    else:
        form = TokenCreateForm()
    response = TemplateResponse(
        request,
        "api/token_list.html",
        {"form": form, "created": created, "tokens": ApiToken.objects.filter(user=request.user)},
    )
    if created is not None:
        # the secret is in this page only: no cache may keep it
        response["Cache-Control"] = "no-store"
    return response


@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    if not api_token_revoke(user=request.user, token_id=token_id):
        raise Http404(_("No such token"))
    messages.success(request, _("Token revoked: it no longer works."))
    return redirect_to(request, "account:token-list")
