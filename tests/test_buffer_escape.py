"""An array the function makes and stores where it holds it by no name of its own: an attribute
of a global object or of an object it made (`K.a = acc`, or `K.keep(acc)` whose method does
`self.a = a`), a global container (a helper's `G.append(a)`). A write into the array through
its own name afterwards (`acc += v`, `acc[0] = v`) changes what the object reads too, which
autotrace, following values, would give the old value: refused, naming the store, wherever
the object is read after the write (by its name, or by a function called that reads it).
Stored as a copy, or the name rebound (`acc = acc + v`), it is followed in every mode.

Also: a `with` block that writes into a buffer's items and then rebinds the buffer's name,
right in every mode (the restore of the old buffer reads it before the rebinding).
"""
import re

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference

X = np.array([0.3, -0.7, 1.1])
THIS_FILE = __file__


def line_of(marker: str) -> int:
    with open(THIS_FILE) as source:
        return next(number for number, text in enumerate(source, 1) if marker in text)


class Keeper:
    def keep(self, a):
        self.a = a

    def keep_copy(self, a):
        self.a = a.copy()


KEEPER = Keeper()
KEPT = []


def keep_in_the_global(a):
    KEEPER.a = a


def append_to_the_global(a):
    KEPT.append(a)


def read_the_global(x):
    return np.sum(KEEPER.a * x)


def kept_by_a_method_of_a_global(x):
    acc = np.zeros(3)
    KEEPER.keep(acc)  # (stored: method of a global)
    acc += x ** 2  # (written: method of a global)
    return np.sum(KEEPER.a * x)


def item_written_after_a_method_of_a_global(x):
    acc = np.zeros(3)
    KEEPER.keep(acc)  # (stored: item)
    acc[0] = x[0] ** 2  # (written: item)
    return np.sum(KEEPER.a * x)


def kept_by_a_method_of_an_object_made_here(x):
    keeper = Keeper()
    acc = np.zeros(3)
    keeper.keep(acc)  # (stored: object made here)
    acc += x ** 2  # (written: object made here)
    return np.sum(keeper.a * x)


def stored_in_a_global_attribute(x):
    acc = np.zeros(3)
    KEEPER.a = acc  # (stored: attribute)
    acc += x ** 2  # (written: attribute)
    return np.sum(KEEPER.a * x)


def stored_by_a_helper_into_a_global(x):
    acc = np.zeros(3)
    keep_in_the_global(acc)  # (stored: helper)
    acc += x ** 2  # (written: helper)
    return np.sum(KEEPER.a * x)


def appended_by_a_helper_to_a_global_list(x):
    acc = np.zeros(3)
    append_to_the_global(acc)  # (stored: list)
    acc += x ** 2  # (written: list)
    return np.sum(KEPT[-1] * x)


def read_by_a_function_called_after_the_write(x):
    acc = np.zeros(3)
    KEEPER.keep(acc)  # (stored: read by a function)
    acc += x ** 2  # (written: read by a function)
    return read_the_global(x)


# (function, the owner read after the write, the store as written, the marker's label)
REFUSED = [
    (kept_by_a_method_of_a_global, "KEEPER", "KEEPER.keep(acc)", "method of a global"),
    (item_written_after_a_method_of_a_global, "KEEPER", "KEEPER.keep(acc)", "item"),
    (kept_by_a_method_of_an_object_made_here, "keeper", "keeper.keep(acc)",
     "object made here"),
    (stored_in_a_global_attribute, "KEEPER", "KEEPER.a = acc", "attribute"),
    (stored_by_a_helper_into_a_global, "KEEPER", "keep_in_the_global(acc)", "helper"),
    (appended_by_a_helper_to_a_global_list, "KEPT", "append_to_the_global(acc)", "list"),
    (read_by_a_function_called_after_the_write, "KEEPER", "KEEPER.keep(acc)",
     "read by a function"),
]

DERIVATIVES = {
    "grad": lambda f: autotrace.grad(f)(X),
    "value_and_grad": lambda f: autotrace.value_and_grad(f)(X),
    "jvp": lambda f: autotrace.jvp(f, (X,), (np.ones(3),)),
    "hessian": lambda f: autotrace.hessian(f)(X),
    "traced grad": lambda f: autotrace.function(autotrace.grad(f))(X),
}


@pytest.mark.parametrize("f, owner, stored, label", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_a_write_into_an_array_an_object_or_global_holds_is_refused(f, owner, stored, label):
    KEPT.clear()
    store, write = line_of(f"(stored: {label})"), line_of(f"(written: {label})")
    read = f"{write + 1}" + (" (by read_the_global, which reads it)" if "function" in label
                             else "")
    what = "acc[0] = ..." if label == "item" else "acc += ..."
    advice = (f"Give {owner!r} a copy if it should keep the old value (acc.copy()), or write "
              f"into {owner!r} too" if label == "item" else
              f"Write acc = acc + ... if {owner!r} should keep the old value, or update "
              f"{owner!r} too")
    expected = (f'File "{THIS_FILE}", line {write}: {what} changes \'acc\' in place, and '
                f"{owner!r} shares its memory ({stored}, line {store}), read after it on line "
                f"{read}; autotrace gives 'acc' alone a new value. {advice}")
    for mode, run in DERIVATIVES.items():
        if f is kept_by_a_method_of_an_object_made_here and mode != "traced grad":
            continue  # (refused at the call: Keeper.keep changes its object, given a gradient)
        with pytest.raises(TransformError) as caught:
            run(f)
        assert str(caught.value) == expected, mode
    # Traced alone, the write would make 'acc' alone a new traced value.
    made = line_of(f"(stored: {label})") - 1
    traced = (f"this writes traced values into the NumPy array 'acc' (acc = np.zeros(3), line "
              f"{made}), whose memory {owner!r} shares ({stored}, line {store}) and reads "
              f"after it, on line {read}: autotrace makes 'acc' alone a new traced value")
    with pytest.raises(ControlFlowError, match=re.escape(traced)):
        autotrace.function(f)(X)


def copy_kept(x):
    acc = np.zeros(3)
    KEEPER.keep_copy(acc)
    acc += x ** 2
    return np.sum(KEEPER.a * x) + np.sum(acc * x)


def name_rebound_after_the_store(x):
    acc = np.zeros(3)
    KEEPER.keep(acc)
    acc = acc + x ** 2
    return np.sum(KEEPER.a * x) + np.sum(acc * x)


def items_written_then_rebound_in_a_with_block(x, flag=False):
    h = np.zeros(3)
    h[:] = np.tanh(x)
    s = np.sin(h) * x
    if flag:
        h = h * 2.0
    else:
        with np.errstate(all="ignore"):
            h[1] = 0.5 * x[0]
            s = s + np.cos(h) * x
            h = h * x
    return np.sum(s) + np.sum(h ** 2)


def rebound_in_a_with_block_in_a_loop(x):
    h = np.zeros(3)
    h[:] = np.tanh(x)
    s = x
    for i in range(2):
        with autotrace.name_scope("step"):
            h[i] = h[i] * x[i + 1]
            s = np.sin(h) * x
            h = h * x
    return np.sum(s) + np.sum(h ** 2)


FOLLOWED = [copy_kept, name_rebound_after_the_store, items_written_then_rebound_in_a_with_block,
            rebound_in_a_with_block_in_a_loop]


@pytest.mark.parametrize("f", FOLLOWED, ids=[f.__name__ for f in FOLLOWED])
def test_a_store_of_a_copy_and_a_rebinding_are_followed_in_every_mode(f):
    expected = central_difference(f, X)
    hessian = np.array([central_difference(lambda p: autotrace.grad(f)(p)[i], X)
                        for i in range(3)])
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, **options)
    value, gradient = autotrace.value_and_grad(f)(X)
    assert value == pytest.approx(f(X))
    np.testing.assert_allclose(gradient, expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), expected, **options)
    assert autotrace.function(f)(X) == pytest.approx(f(X))
    assert autotrace.jvp(f, (X,), (np.ones(3),))[1] == pytest.approx(np.sum(expected))
    np.testing.assert_allclose(autotrace.hessian(f)(X), hessian, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(f))(X), hessian,
                               rtol=1e-5, atol=1e-6)
