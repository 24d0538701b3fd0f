"""`GET /admin`: the dashboard, one self-contained HTML page (no build step, no CDN).

The page holds no data: everything it shows comes from `/admin/api/*` with the bearer token. So
without a valid token the route still answers 401 (403 when admin is disabled), with the same page
as its body, which asks for the token and keeps it in the tab's sessionStorage.
"""
from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from cachegate.api.admin.auth import require_admin
from cachegate.errors import APIError

router = APIRouter()


def page() -> str:
    return files("cachegate.api.admin").joinpath("dashboard.html").read_text()


@router.get("/admin", response_class=HTMLResponse)
async def dashboard(http: Request) -> HTMLResponse:
    try:
        require_admin(http)
    except APIError as exc:
        return HTMLResponse(page(), status_code=exc.status)
    return HTMLResponse(page())
