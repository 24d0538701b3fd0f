"""Chaos and soak scenarios with a pass/fail verdict; loopback only, bounded, stopping by themselves."""
