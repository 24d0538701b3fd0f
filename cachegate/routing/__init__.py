"""Where a request goes: the client's `model` resolved to a route (`router`) and the route's chain tried model
by model until one answers (`fallback`)."""
