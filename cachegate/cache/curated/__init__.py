"""Curated answers: the approved answers a support team or a code platform keeps for its frequent
questions, each with example questions, matched like any semantic hit and never pushed out by learned
entries."""
