"""The HTTP face: the app factory (`app`), the OpenAI-compatible routes (`routes`), the operators' routes and
dashboard (`admin/`), the OpenAI schema, translation into the gateway's request, response shaping, errors,
edge guards and the OpenAPI description. Routes are thin: they reach the services (built by `cachegate.build`)
through `state.services_of` and call the pipeline; nothing outside this package imports it."""
