"""``python -m omega_cluster <command> …`` runs the ``omega-cluster`` command line."""

from omega_cluster.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
