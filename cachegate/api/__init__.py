"""cachegate.api."""
