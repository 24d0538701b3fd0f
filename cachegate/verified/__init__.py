"""Verified hits: the gateway measures its own false-hit rate (shadow re-asks, client feedback), holds
each namespace under its target by tightening its semantic decision, and keeps the labels it learns."""
