"""The operators' side: the /admin dashboard page and its authenticated JSON API."""
