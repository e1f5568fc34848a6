"""Constant folding in generated code (transforms/codegen/constant_folding.py): a product by a
float and then by a power of two of at least 2 becomes a product by one number, which rounds
to the same value in every floating dtype; other products of numbers stay as written."""
import gast
import numpy as np
import pytest

import autotrace
from autotrace.transforms.codegen.codegen import to_source
from autotrace.transforms.codegen.constant_folding import fold_constants


def folded(source: str) -> str:
    body = gast.parse(source).body
    fold_constants(body)
    return "\n".join(to_source(statement).strip() for statement in body)


@pytest.mark.parametrize("source, expected", [
    ("y = g * 0.1 * 2 * x", "y = g * 0.2 * x"),
    ("y = g * 0.3 * 8.0", "y = g * 2.4"),
    ("y = g * 0.1 * -4", "y = g * -0.4"),
    ("y = 2.0 * 3 + g", "y = 6.0 + g"),
    # neither factor a power of two: two roundings, which one product would not repeat
    ("y = g * 0.1 * 3", "y = g * 0.1 * 3"),
    # an integer first factor (`k * 2 * 0.5` of an integer k may overflow in `k * 2`), a
    # power of two below 2 (`g * 3.0 * 0.5`: g * 3.0 may overflow where g * 1.5 would not)
    ("y = g * 2 * 0.5", "y = g * 2 * 0.5"),
    ("y = g * 3.0 * 0.5", "y = g * 3.0 * 0.5"),
    # factors past float16's normal numbers (float16 arrays would round them apart)
    ("y = g * 1e-06 * 2", "y = g * 1e-06 * 2"),
    ("y = g * 40000.0 * 2", "y = g * 40000.0 * 2"),
    ("y = g * 0.1 / 2", "y = g * 0.1 / 2"),
])
def test_products_by_numbers_in_turn(source, expected):
    assert folded(source) == expected


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("first, second", [(0.1, 2), (0.3, 4), (-0.7, 8.0), (1.1, -2),
                                           (3e-3, 2), (1000.3, 32)])
def test_a_folded_product_computes_the_same_bits(dtype, first, second):
    """What the folding rests on: multiplying by a power of two is exact, so `e * a * b` and
    `e * (a * b)` round once, to the same value (NumPy casts the Python numbers to e's dtype),
    overflowing alike, wherever e * a is not subnormal (here: float16's e at least 0.05)."""
    rng = np.random.default_rng(0)
    magnitudes = rng.uniform(1.0, 6.0, 10_000) * 10.0 ** rng.integers(-1, 5, 10_000)
    e = (magnitudes * rng.choice([-1.0, 1.0], 10_000)).astype(dtype)
    with np.errstate(over="ignore"):  # (float16 overflows, alike both ways)
        np.testing.assert_array_equal(e * first * second, e * (first * second))
        for value in e[:50]:  # NumPy scalars and Python floats alike
            assert value * first * second == value * (first * second)
            assert complex(value) * first * second == complex(value) * (first * second)


def scalar_loop(x):
    for _ in range(3):
        x = np.sin(x) * 0.9 + 0.1 * x ** 2
    return x


def test_a_constant_inlined_beside_powers_rule_is_folded():
    """`0.1 * x ** 2`: the product's rule gives `b * 0.1`, power's `* 2 * x` after it."""
    gradient = autotrace.grad(scalar_loop)
    assert "b_t4 * 0.2 * x\n" in autotrace.source(gradient)
    x, h = 0.4, 1e-6
    assert gradient(x) == pytest.approx((scalar_loop(x + h) - scalar_loop(x - h)) / (2 * h),
                                        rel=1e-8)
