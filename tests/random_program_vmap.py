"""The vmap modes of the random programs (tests/random_program_checks.py): a program batched
by autotrace.vmap against a Python loop over its examples.

    vmap        vmap(f, in_axes=(0, None))(xs, a)         = np.stack([f(x, a) for x in xs])
    vmap_grad   vmap(grad(f, wrt), in_axes=(0, None))     = the stack of grad(f, wrt)(x, a)

The batch holds BATCH examples of x: the program's point and the point moved by small
perturbations, different for each, so that examples may take different branches and trip
counts (the selects and masked loops vmap makes of them); `a`, a Python float, is the same for
every example. The loop runs f as Python and NumPy run it, and grad eagerly.

vmap refuses, with the reason, what docs/limitations.md lists as refused (`x[mask]` with a
traced mask, writing objects' state): such a refusal is counted apart, under the reason it
names; any other error is a failure. (The gradient of a traced loop is batched, one stack of
saved values per example, and checked like any other.)
"""
from __future__ import annotations

import numpy as np

import autotrace as at

BATCH = 3
PERTURBATION = 0.05   # the size of the moves from the point to the other examples

# What docs/limitations.md lists as refused under vmap: a phrase of each refusal, and its name.
DOCUMENTED_REFUSALS = {
    "x[mask] with a traced mask": "x[mask] with a traced mask",
    "writes the state of objects or autotrace.Variables": "writing objects' state",
}


def batch_of(x: np.ndarray, seed: int) -> np.ndarray:
    """BATCH examples of x, stacked along a new axis 0: x, then x moved a little."""
    rng = np.random.default_rng(seed + 2)
    moves = PERTURBATION * rng.standard_normal((BATCH - 1, *np.shape(x)))
    return np.stack([x, *(x + move for move in moves)])


def documented_refusal(error: Exception) -> str:
    """The docs' name for the vmap refusal `error` is, or "" where it is none of them."""
    text = str(error)
    if not text.startswith("autotrace.vmap("):
        return ""
    return next((name for phrase, name in DOCUMENTED_REFUSALS.items() if phrase in text), "")


def check_batched(batched, examples: list, what: str) -> None:
    """Raises AssertionError unless `batched` (an array, or a tuple of them) is the stack of
    the examples' results: the same shape, nan where they are nan, the same infinities, other
    values within rounding (the batch may sum in another order)."""
    if isinstance(examples[0], tuple):
        if not isinstance(batched, tuple) or len(batched) != len(examples[0]):
            raise AssertionError(f"{what}: {type(batched).__name__} {batched!r}, expected a "
                                 f"tuple of {len(examples[0])}")
        for index, got in enumerate(batched):
            check_batched(got, [result[index] for result in examples], f"{what}[{index}]")
        return
    got = np.asarray(batched, dtype=float)
    want = np.stack([np.asarray(result, dtype=float) for result in examples])
    finite = np.isfinite(want)
    scale = max(1.0, float(np.abs(want[finite]).max())) if finite.any() else 1.0
    if (got.shape != want.shape
            or not np.array_equal(np.isnan(got), np.isnan(want))
            or not np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
            or not np.allclose(got[finite], want[finite], rtol=1e-9, atol=1e-12 * scale)):
        raise AssertionError(f"{what}: {got!r}, a loop over the examples gives {want!r}")


def check_vmap(f, xs: np.ndarray, a: float) -> None:
    """vmap(f) over the rows of xs against f run for each row."""
    with np.errstate(all="ignore"):
        expected = [f(x.copy(), a) for x in xs]
        batched = at.vmap(f, in_axes=(0, None))(xs.copy(), a)
    check_batched(batched, expected, "vmap(f, in_axes=(0, None))")


def check_vmap_grad(f, wrt, xs: np.ndarray, a: float) -> None:
    """vmap(grad(f, wrt)) over the rows of xs against grad(f, wrt) run for each row."""
    gradient = at.grad(f, wrt=wrt)
    with np.errstate(all="ignore"):
        expected = [gradient(x.copy(), a) for x in xs]
        batched = at.vmap(gradient, in_axes=(0, None))(xs.copy(), a)
    check_batched(batched, expected, f"vmap(grad(f, wrt={wrt!r}), in_axes=(0, None))")
