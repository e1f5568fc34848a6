"""`autotrace.random`: random numbers that trace, differentiate as constants, and reproduce.

    generator = autotrace.random.Generator(seed=0)
    mask = generator.uniform((32, 10)) > 0.5

A Generator keeps its key in a non-trainable Variable and advances it on every draw, so inside
`autotrace.function` each call of the cached graph draws new numbers, and checkpoints save
where the stream is. The module-level `uniform` and `normal` draw from a default generator
seeded from the operating system, until `set_seed`. A Generator made without a seed (a
Dropout layer's) takes one from the operating system too, or after `set_seed` the next of a
stream of seeds that set_seed starts: as after `tf.random.set_seed`, a program that sets the
seed first draws the same numbers on every run, while two layers made alike in one run draw
different ones.
"""
from __future__ import annotations

import numpy as np

from autotrace.placement import current_device
from autotrace.initializers import reseed
from autotrace.variables import Variable
from autotrace.runtime.derivatives.random_states import drawing_module, random_source
from autotrace.runtime.primitives.keyed_random import draw
from autotrace.transforms.rules.core import constant

__all__ = ["Generator", "default_generator", "set_seed", "uniform", "normal"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports


class Generator:
    """A stream of random numbers, its position held in a Variable (`.key`).

    Arguments:
        seed: an int; None takes the next seed of the stream `set_seed` started (so that
            a layer made after set_seed draws the same numbers on every run), or before any
            set_seed, one from the operating system.
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
            seed = _next_seed()
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
# (a Jacobian's runs, and a derivative's runs again of a call, draw what the first drew)
random_source(Generator, lambda generator: generator.key.read(),
              lambda generator, key: generator.key.assign(key),
              lambda generator: (generator.key,))

_default: dict = {}  # device name -> that device's default generator
_default_seed: list = []  # the seed set_seed gave, for generators of devices seen later
_seed_stream: list = []  # after set_seed: the NumPy generator of seeds for Generator(None)


def _next_seed() -> int:
    """A seed for a Generator made without one: the next of set_seed's stream, else the
    operating system's. Below 2**63, so that the keys a Generator advances through (seed,
    seed + 1, ...) do not wrap around."""
    if _seed_stream:
        return int(_seed_stream[0].integers(2 ** 63))
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])


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


# (a call that draws, or reaches uniform or normal, notes the default generators' keys)
drawing_module(__name__, lambda: [default_generator(), *_default.values()])


def set_seed(seed: int) -> None:
    """Restart the default generators at `seed` (one per device, each starting at the same
    place), the one weight initializers draw from when given none (so a model built after
    this starts the same way each run), and the stream of seeds for Generators made without
    one (so Dropout layers made after this draw the same masks each run; two of them, made
    one after the other, draw different ones, as in TensorFlow).

    Examples:
        >>> set_seed(1); first = autotrace.random.uniform((3,))
        >>> set_seed(1); again = autotrace.random.uniform((3,))
        >>> np.array_equal(first, again)
        True
    """
    _default_seed[:] = [seed]
    # (a stream of its own: not the default generators' keys, nor the initializers' numbers)
    _seed_stream[:] = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))]
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
