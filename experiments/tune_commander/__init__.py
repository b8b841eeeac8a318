"""Tuning the Commander's weights by an evolution strategy (see README.md)."""
