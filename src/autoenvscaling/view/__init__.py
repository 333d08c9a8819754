"""``autoenv view``: a local, read-only web viewer over run dirs, pools and trajectories.

The top layer: it only reads files (and the pool's catalog, opened read-only); nothing here writes. See ``app`` for
the routes and their safety rules, ``runs`` for how run dirs are recognised.
"""
