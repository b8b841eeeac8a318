"""Research studies kept apart from the service: each folder one study, its README the results.

Nothing in ``omega_cluster/`` or ``tests/`` imports this package; a study imports the service.
"""
