"""cachegate.access."""
