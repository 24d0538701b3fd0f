"""cachegate.commands."""
