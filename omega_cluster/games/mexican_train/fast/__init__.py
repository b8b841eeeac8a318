"""Mexican Train on arrays: the packed state, its rules, determinizations and the encoder as
compiled kernels (numba) for the fast search path of :mod:`omega_cluster.search.fast`."""
