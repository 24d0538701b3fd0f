"""cachegate.routing.router."""
