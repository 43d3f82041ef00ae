"""The explicit engine's exploration: the interpreted breadth-first search, its hand-over to the
vector core, and one exploration partitioned over a Dask cluster."""
