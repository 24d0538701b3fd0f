"""Measuring the semantic tier on labeled data through the real tier (`cachegate eval semantic`)."""
