"""How routes reach what they serve with: the app factory puts the services (`cachegate.build`) and the request
memo on `app.state`; every route reads them through these two functions, and nothing else of the app."""
from __future__ import annotations

from starlette.requests import Request

from cachegate.api.request_memo import RequestMemo
from cachegate.build import Services


def services_of(http: Request) -> Services:
    return http.app.state.services


def memo_of(http: Request) -> RequestMemo:
    return http.app.state.requests
