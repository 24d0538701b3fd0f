"""The `cachegate` verbs, one module each (`add_arguments`, `run`); `main` builds the parser from its own table
and the verbs other packages register (the load tests and benchmarks: `loadtests/commands.py`)."""
