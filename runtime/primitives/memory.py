"""Facts about NumPy's memory that the checks of writes into shared memory rest on: which object
owns an array's memory, and how many references a container alone gives an item.
"""
from __future__ import annotations

import sys


def memory_owner(array):
    """The object that owns the memory of a NumPy array: the array itself, or what its chain of
    bases ends in (an array, or a buffer: bytes, an mmap, the object a memoryview is of),
    through objects that are no arrays too (np.lib.stride_tricks.as_strided keeps its array
    as the base of an object of its own). Arrays with different owners share no memory."""
    while True:
        base = array.obj if isinstance(array, memoryview) else getattr(array, "base", None)
        if base is None:
            return array
        array = base


def _references_in_a_container() -> int:
    """The references sys.getrefcount counts for an item a container alone holds, read as
    `item = container[key]` in a function, then `sys.getrefcount(item)` (the container's, the
    local name's, the call's argument's): measured, since Python versions count them
    differently."""
    container = [object()]
    item = container[0]
    return sys.getrefcount(item)


# Where an item read so has no more references, nothing but its container holds it.
ONLY_THE_CONTAINERS = _references_in_a_container()
