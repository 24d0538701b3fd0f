"""Admin authentication: `Authorization: Bearer <token>` against `admin.token` (or the variable
CACHEGATE_ADMIN_TOKEN). Without a configured token every admin route is refused, never open.
The token is compared in constant time and never logged."""
from __future__ import annotations

import hmac

from fastapi import Request

from cachegate.api.state import services_of
from cachegate.errors import APIError


class AdminDisabled(APIError):
    status = 403
    type = "permission_error"

    def __init__(self) -> None:
        super().__init__("The admin API is disabled: set admin.token or CACHEGATE_ADMIN_TOKEN to enable it",
                         code="admin_disabled")


class AdminUnauthorized(APIError):
    status = 401
    type = "authentication_error"

    def __init__(self) -> None:
        super().__init__("A valid admin bearer token is required (Authorization: Bearer <token>)",
                         code="invalid_admin_token")


def require_admin(http: Request) -> None:
    token = services_of(http).settings.admin.token
    if token is None or not token.get_secret_value():
        raise AdminDisabled()
    given = http.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(),
                                                             token.get_secret_value().encode()):
        raise AdminUnauthorized()
