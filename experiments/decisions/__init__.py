"""Per-decision strength of Mexican Train searchers against Commander (see README.md)."""
