"""`autotrace.random`: random numbers that trace, differentiate as constants, and reproduce.

    generator = autotrace.random.Generator(seed=0)
    mask = generator.uniform((32, 10)) > 0.5

A Generator keeps its key in a non-trainable Variable and advances it on every draw, so inside
`autotrace.function` each call of the cached graph draws new numbers, and checkpoints save
where the stream is. The module-level `uniform` and `normal` draw from a default generator
seeded from the operating system.
"""
from __future__ import annotations

import numpy as np

from autotrace.placement import current_device
from autotrace.initializers import reseed
from autotrace.variables import Variable
from autotrace.runtime.primitives.keyed_random import draw
from autotrace.transforms.rules.core import constant

__all__ = ["Generator", "default_generator", "set_seed", "uniform", "normal"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports


class Generator:
    """A stream of random numbers, its position held in a Variable (`.key`).

    Arguments:
        seed: an int; None takes one from the operating system.
        name: the name of the key's Variable.

    Examples:
        >>> first, again = Generator(seed=0), Generator(seed=0)
        >>> np.array_equal(first.uniform((3,)), again.uniform((3,)))   # one seed, one stream
        True
        >>> first.normal((2, 3)).shape
        (2, 3)
    """

    def __init__(self, seed: int | None = None, name: str = "random_key"):
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.key = Variable(np.uint64(seed), name=name, trainable=False)

    def _next_key(self):
        key = self.key.read()
        self.key.assign(key + np.uint64(1))
        return key

    def uniform(self, shape, low=0.0, high=1.0, dtype=np.float64):
        """Numbers uniform in [low, high), of `shape`."""
        values = draw(self._next_key(), shape, dtype, "uniform")
        return values if (low, high) == (0.0, 1.0) else low + (high - low) * values

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=np.float64):
        """Normally distributed numbers of `shape`."""
        values = draw(self._next_key(), shape, dtype, "normal")
        return values if (mean, stddev) == (0.0, 1.0) else mean + stddev * values


constant(Generator.uniform, Generator.normal)  # draws carry no gradient

_default: dict = {}  # device name -> that device's default generator
_default_seed: list = []  # the seed set_seed gave, for generators of devices seen later


def default_generator() -> Generator:
    """The current device's default generator (its draws are made there).

    Examples:
        >>> draws = default_generator().uniform((2,), low=1.0, high=2.0)
        >>> bool(np.all((1.0 <= draws) & (draws < 2.0)))
        True
    """
    device = current_device()
    if device not in _default:
        seed = _default_seed[0] if _default_seed else None
        name = "random_key" if device == "cpu" else f"random_key_{device.replace(':', '')}"
        _default[device] = Generator(seed, name=name)
    return _default[device]


def set_seed(seed: int) -> None:
    """Restart the default generators at `seed` (one per device, each starting at the same
    place), and the one weight initializers draw from when given none (so a model built after
    this starts the same way each run).

    Examples:
        >>> set_seed(1); first = autotrace.random.uniform((3,))
        >>> set_seed(1); again = autotrace.random.uniform((3,))
        >>> np.array_equal(first, again)
        True
    """
    _default_seed[:] = [seed]
    for generator in _default.values():
        generator.key.assign(np.uint64(seed))  # assign copies it to the key's device
    reseed(seed)


def uniform(shape, low=0.0, high=1.0, dtype=np.float64):
    """Draw from the default generator (see Generator.uniform).

    Examples:
        >>> draws = uniform((1000,), low=-1.0, high=1.0)
        >>> draws.shape, bool(np.all(np.abs(draws) <= 1.0))
        ((1000,), True)
    """
    return default_generator().uniform(shape, low, high, dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype=np.float64):
    """Draw from the default generator (see Generator.normal).

    Examples:
        >>> draws = normal((10000,), mean=3.0, stddev=0.5)
        >>> bool(abs(draws.mean() - 3.0) < 0.05), bool(abs(draws.std() - 0.5) < 0.05)
        (True, True)
    """
    return default_generator().normal(shape, mean, stddev, dtype)
