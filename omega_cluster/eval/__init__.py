"""Evaluation: matches between players (arena), statistics and ratings."""
