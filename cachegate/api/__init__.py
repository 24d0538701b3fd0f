"""The HTTP face: the app factory (`app`), the OpenAI-compatible routes (`routes`), the operators' routes and
dashboard (`admin/`), the OpenAI schema, translation into the gateway's request, response shaping, errors,
edge guards and the OpenAPI description. Routes are thin: they read `app.state.services` (built by
`cachegate.build`) and call the pipeline; nothing outside this package imports it."""
