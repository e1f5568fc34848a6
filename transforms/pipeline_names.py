"""Facts about NumPy functions that more than one transform needs."""

# Functions whose results are tuples or lists of arrays (by name: numpy and builtins).
CONTAINER_RESULTS = {"eigh", "slogdet", "split", "array_split", "broadcast_arrays", "svd", "qr",
                     "atleast_1d", "atleast_2d", "atleast_3d", "meshgrid", "list", "tuple"}
