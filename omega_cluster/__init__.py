"""omega_cluster: a self-play training service for games with hidden information, many players
and simultaneous moves. See docs/design.md for the architecture; ``omega_cluster.games`` is the base."""

__version__ = "0.1.0"
