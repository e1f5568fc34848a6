"""A function that writes into its argument in place, reached through another name: handed to
a function that calls it (`apply(set_first, buf)`), handed on through two functions, bound to
another name or held in a dict or a list. autotrace does not follow such a write back into the
caller, so where the caller reads the array afterwards the call is refused at the user's line in
every mode, as the direct call `set_first(buf, v)` is; the same shapes of code with a function
that only reads are differentiated, and match finite differences in every mode."""
import functools
import inspect
import os

import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError

from tests.numeric import central_difference

X = np.array([0.5, -1.0, 2.0])
DIRECTION = np.array([0.3, -0.2, 0.7])

MODES = {
    "grad": lambda f: autotrace.grad(f)(X),
    "value_and_grad": lambda f: autotrace.value_and_grad(f)(X),
    "forward": lambda f: autotrace.forward(f)(X, tangent=DIRECTION),
    "jvp": lambda f: autotrace.jvp(f, (X,), (DIRECTION,)),
    "vjp": lambda f: autotrace.vjp(f, X)[1](1.0),
    "hessian": lambda f: autotrace.hessian(f)(X),
    "function(grad)": lambda f: autotrace.function(autotrace.grad(f))(X),
    "vmap(grad)": lambda f: autotrace.vmap(autotrace.grad(f))(np.stack([X, -2.0 * X])),
}


def set_first(b, v):
    b[0] = v


def apply_at_module(fn, b, v):
    fn(b, v)


def total_at_module(b, v):
    return np.sum(b * v)


def apply_reader_at_module(fn, b, v):
    return fn(b, v)


# --- writers, refused where the caller reads the array afterwards ---------------------------

def nested_writer_handed_to_a_nested_function(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: nested apply
    apply(set_item, buf)
    return np.sum(buf * x)


def nested_writer_handed_on_twice(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v

    def apply_inner(fn, b):
        fn(b, x[0] * 2)

    def apply_outer(fn, b):
        apply_inner(fn, b)  # marker: handed on
    apply_outer(set_item, buf)
    return np.sum(buf * x)


def module_writer_handed_to_a_nested_function(x):
    buf = np.zeros(3)

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: module writer, nested apply
    apply(set_first, buf)
    return np.sum(buf * x)


def module_writer_handed_to_a_module_function(x):
    buf = np.zeros(3)
    apply_at_module(set_first, buf, x[0] * 2)
    return np.sum(buf * x)


def writer_handed_by_keyword(x):
    buf = np.zeros(3)

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: keywords
    apply(b=buf, fn=set_first)
    return np.sum(buf * x)


def alias_of_a_writer_handed_on(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: alias handed on
    w = set_item
    apply(w, buf)
    return np.sum(buf * x)


def writer_from_a_dict_handed_on(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: dict item handed on
    ops = {"s": set_item}
    apply(ops["s"], buf)
    return np.sum(buf * x)


def list_of_writers_handed_on(x):
    buf = np.zeros(3)

    def apply(fns, b):
        for fn in fns:
            fn(b, x[0] * 2)  # marker: list handed on
    apply([set_first], buf)
    return np.sum(buf * x)


def writer_called_by_another_name_inside(x):
    buf = np.zeros(3)

    def apply(fn, b):
        g = fn
        g(b, x[0] * 2)  # marker: renamed inside
    apply(set_first, buf)
    return np.sum(buf * x)


def lambda_writer_handed_on(x):
    buf = np.zeros(3)

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: lambda handed on
    apply(lambda b, v: b.__setitem__(0, v), buf)
    return np.sum(buf * x)


WRITERS = {"first": set_first}


def writer_from_a_module_dict_handed_on(x):
    buf = np.zeros(3)

    def apply(fns, b):
        fns["first"](b, x[0] * 2)  # marker: module dict handed on
    apply(WRITERS, buf)
    return np.sum(buf * x)


class Holder:
    def store(self, b, v):
        b[0] = v


def method_of_an_object_made_here_handed_on(x):
    buf = np.zeros(3)
    holder = Holder()

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: method handed on
    apply(holder.store, buf)
    return np.sum(buf * x)


def partial_of_a_writer_called(x):
    buf = np.zeros(3)
    fill = functools.partial(set_first, buf)
    fill(x[0] * 2)
    return np.sum(buf * x)


def partial_of_a_writer_handed_on(x):
    buf = np.zeros(3)

    def apply(fn, v):
        fn(v)
    apply(functools.partial(set_first, buf), x[0] * 2)
    return np.sum(buf * x)


def _lines(f, marker: str) -> tuple:
    """The line of `marker` in f, of the call after it, of the read after that."""
    lines, first = inspect.getsourcelines(f)
    at = next(i for i, text in enumerate(lines) if marker in text)
    call = next(i for i in range(at + 1, len(lines)) if "apply" in lines[i])
    return first + at, first + call, first + call + 1


def _handed(f, marker, call, change, callee):
    write, line, read = _lines(f, marker)
    message = (f"{call} changes its argument 'b' in place ({change}, {__file__}, line {write}), "
               f"which autotrace does not follow into this function, and 'buf' is read after "
               f"it on line {read}; return the new value from {callee} instead")
    return f, line, message


MODULE_APPLY_LINE = apply_at_module.__code__.co_firstlineno + 1
HANDED = [
    _handed(nested_writer_handed_to_a_nested_function, "nested apply", "apply(set_item, buf)",
            "fn(b, x[0] * 2)", "apply"),
    _handed(nested_writer_handed_on_twice, "handed on", "apply_outer(set_item, buf)",
            "apply_inner(fn, b)", "apply_outer"),
    _handed(module_writer_handed_to_a_nested_function, "module writer, nested apply",
            "apply(set_first, buf)", "fn(b, x[0] * 2)", "apply"),
    (module_writer_handed_to_a_module_function,
     module_writer_handed_to_a_module_function.__code__.co_firstlineno + 2,
     f"apply_at_module(set_first, buf, x[0] * 2) changes its argument 'b' in place (fn(b, v), "
     f"{__file__}, line {MODULE_APPLY_LINE}), which autotrace does not follow into this "
     f"function, and 'buf' is read after it on line "
     f"{module_writer_handed_to_a_module_function.__code__.co_firstlineno + 3}; return the new "
     f"value from apply_at_module instead"),
    _handed(writer_handed_by_keyword, "keywords", "apply(b=buf, fn=set_first)",
            "fn(b, x[0] * 2)", "apply"),
    _handed(alias_of_a_writer_handed_on, "alias handed on", "apply(w, buf)",
            "fn(b, x[0] * 2)", "apply"),
    _handed(writer_from_a_dict_handed_on, "dict item handed on", "apply(ops['s'], buf)",
            "fn(b, x[0] * 2)", "apply"),
    _handed(list_of_writers_handed_on, "list handed on", "apply([set_first], buf)",
            "fn(b, x[0] * 2)", "apply"),
    _handed(writer_called_by_another_name_inside, "renamed inside", "apply(set_first, buf)",
            "g(b, x[0] * 2)", "apply"),
    _handed(writer_from_a_module_dict_handed_on, "module dict handed on",
            "apply(WRITERS, buf)", "fns['first'](b, x[0] * 2)", "apply"),
    _handed(method_of_an_object_made_here_handed_on, "method handed on",
            "apply(holder.store, buf)", "fn(b, x[0] * 2)", "apply"),
    _handed(lambda_writer_handed_on, "lambda handed on",
            "apply(lambda b, v: b.__setitem__(0, v), buf)", "fn(b, x[0] * 2)", "apply"),
]


def _partial(f, offset: int, call: str):
    message = (f"{call} changes the argument 'b' of set_first that functools.partial("
               f"set_first, buf) holds in place (b[0] = ..., {__file__}, line "
               f"{SET_FIRST_LINE}), which autotrace does not follow into this function, and "
               f"'buf' is read after it on line {f.__code__.co_firstlineno + offset + 1}; "
               f"return the new value from set_first instead")
    return f, f.__code__.co_firstlineno + offset, message


SET_FIRST_LINE = set_first.__code__.co_firstlineno + 1
HANDED += [
    _partial(partial_of_a_writer_called, 3, "fill(x[0] * 2)"),
    _partial(partial_of_a_writer_handed_on, 5,
             "apply(functools.partial(set_first, buf), x[0] * 2)"),
]


def _check_refused(f, mode: str, line: int, message: str, construct: str) -> None:
    """`f` in `mode` is refused at this file's `line` with exactly `message`."""
    with pytest.raises(TransformError) as caught:
        MODES[mode](f)
    error = caught.value
    assert error.message == message
    assert error.lineno == line
    assert os.path.abspath(error.filename) == os.path.abspath(__file__)
    assert error.construct == construct


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, line, message", HANDED, ids=[case[0].__name__ for case in HANDED])
def test_a_writer_handed_to_a_function_that_calls_it_is_refused_at_the_call(f, line, message,
                                                                           mode):
    _check_refused(f, mode, line, message, "write into shared memory")


# --- writers called through another name: refused when the call runs ------------------------

def writer_called_by_another_name(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v
    w = set_item
    w(buf, x[1])
    return np.sum(buf * x)


def writer_called_from_a_dict(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v
    ops = {"s": set_item}
    ops["s"](buf, x[0])
    return np.sum(buf * x)


def writer_called_from_a_list(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v
    ops = [set_item]
    ops[0](buf, x[0])
    return np.sum(buf * x)


def writers_called_in_a_loop(x):
    buf = np.zeros(3)

    def set_item(b, v):
        b[0] = v

    def set_other(b, v):
        b[1] = v
    for w in [set_item, set_other]:
        w(buf, x[0] * 2)
    return np.sum(buf * x)


def module_writer_called_by_another_name(x):
    buf = np.zeros(3)
    w = set_first
    w(buf, x[1])
    return np.sum(buf * x)


def writer_handed_on_writes_a_copy_returned(x):
    buf = np.zeros(3)

    def apply(fn, b):
        c = b.copy()
        fn(c, x[0] * 2)
        return c
    c = apply(set_first, buf)
    return np.sum(c * x) + np.sum(buf)


def _found_when_it_runs(f, offset: int, callee: str, write_line: int):
    message = (f"this call of {callee} (found only when it runs) changes its argument 'b' in "
               f"place (b[0] = ..., {__file__}, line {write_line}), which autotrace does not "
               f"follow back into the function that calls it: the gradient of what it writes "
               f"would be lost; return the new value from {callee} instead")
    return f, f.__code__.co_firstlineno + offset, message


FOUND_WHEN_IT_RUNS = [
    _found_when_it_runs(writer_called_by_another_name, 6, "writer_called_by_another_name__set_item",
                        writer_called_by_another_name.__code__.co_firstlineno + 4),
    _found_when_it_runs(writer_called_from_a_dict, 6, "writer_called_from_a_dict__set_item",
                        writer_called_from_a_dict.__code__.co_firstlineno + 4),
    _found_when_it_runs(writer_called_from_a_list, 6, "writer_called_from_a_list__set_item",
                        writer_called_from_a_list.__code__.co_firstlineno + 4),
    _found_when_it_runs(writers_called_in_a_loop, 9, "writers_called_in_a_loop__set_item",
                        writers_called_in_a_loop.__code__.co_firstlineno + 4),
    _found_when_it_runs(module_writer_called_by_another_name, 3, "set_first", SET_FIRST_LINE),
    _found_when_it_runs(writer_handed_on_writes_a_copy_returned, 5, "set_first", SET_FIRST_LINE),
]


def make_writer():
    return set_first


class Box:
    def __init__(self):
        self.fn = set_first


BOX = Box()


def writer_made_by_a_factory_handed_on(x):
    buf = np.zeros(3)

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: factory
    apply(make_writer(), buf)
    return np.sum(buf * x)


def writer_as_a_default_handed_on(x, writer=set_first):
    buf = np.zeros(3)

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: default
    apply(writer, buf)
    return np.sum(buf * x)


def writer_held_by_an_object_handed_on(x):
    buf = np.zeros(3)

    def apply(fn, b):
        fn(b, x[0] * 2)  # marker: held by an object
    apply(BOX.fn, buf)
    return np.sum(buf * x)


def _given_when_it_runs(f, marker: str):
    write, line, _ = _lines(f, marker)
    message = (f"this call of {f.__name__}__apply (found only when it runs) changes its "
               f"argument 'b' in place (fn(b, x[0] * 2), {__file__}, line {write}), which "
               f"autotrace does not follow back into the function that calls it: the gradient "
               f"of what it writes would be lost; return the new value from {f.__name__}__apply "
               f"instead")
    return f, line, message


FOUND_WHEN_IT_RUNS += [
    _given_when_it_runs(writer_made_by_a_factory_handed_on, "marker: factory"),
    _given_when_it_runs(writer_as_a_default_handed_on, "marker: default"),
    _given_when_it_runs(writer_held_by_an_object_handed_on, "marker: held by an object"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, line, message", FOUND_WHEN_IT_RUNS,
                         ids=[case[0].__name__ for case in FOUND_WHEN_IT_RUNS])
def test_a_writer_called_by_another_name_is_refused_when_the_call_runs(f, line, message, mode):
    _check_refused(f, mode, line, message, "write into an argument")


# --- readers, the same shapes of code: differentiated ---------------------------------------

def reader_handed_to_a_nested_function(x):
    buf = x * 1.0

    def total(b, v):
        return np.sum(b * v)

    def apply(fn, b):
        return fn(b, x[0] * 2)
    t = apply(total, buf)
    return t + np.sum(buf * buf)


def reader_handed_on_twice(x):
    buf = np.tanh(x)

    def total(b, v):
        return np.sum(b * v)

    def apply_inner(fn, b):
        return fn(b, x[1])

    def apply_outer(fn, b):
        return apply_inner(fn, b)
    return apply_outer(total, buf) * np.sum(buf)


def module_reader_handed_to_a_module_function(x):
    buf = x ** 2
    t = apply_reader_at_module(total_at_module, buf, x[2])
    return t + np.sum(buf)


READER_TABLE = {"total": total_at_module}


def reader_from_a_module_dict_handed_on(x):
    buf = np.cos(x)

    def apply(fns, b):
        return fns["total"](b, x[0])
    return apply(READER_TABLE, buf) + np.sum(buf * x)


def partial_of_a_reader_handed_on(x):
    weights = np.ones(3) * 2.0

    def apply(fn, v):
        return fn(v)
    return apply(functools.partial(total_at_module, weights), x[0] * x[1]) + np.sum(x * x)


def make_reader():
    return total_at_module


def reader_made_by_a_factory_handed_on(x):
    buf = np.sin(x)

    def apply(fn, b):
        return fn(b, x[1])
    return apply(make_reader(), buf) + np.sum(buf * x)


def reader_called_by_another_name(x):
    def total(b):
        return np.sum(b * b)
    t = total
    return t(x) * 2.0 + np.sum(x)


def reader_called_from_a_dict(x):
    def total(b):
        return np.sum(np.sin(b) * b)
    ops = {"t": total}
    return ops["t"](x) * x[0]


def readers_called_from_a_list(x):
    def total(b):
        return np.sum(b * b)

    def first(b):
        return b[0] * b[1]
    result = 0.0
    for fn in [total, first]:
        result = result + fn(x)
    return result


def alias_of_a_reader_handed_on(x):
    def total(b, v):
        return np.sum(b * v)

    def apply(fn, b):
        return fn(b, x[0])
    w = total
    return apply(w, x) + np.sum(x * x)


READERS = [reader_handed_to_a_nested_function, reader_handed_on_twice,
           module_reader_handed_to_a_module_function, reader_called_by_another_name,
           reader_called_from_a_dict, readers_called_from_a_list, alias_of_a_reader_handed_on,
           reader_from_a_module_dict_handed_on, partial_of_a_reader_handed_on,
           reader_made_by_a_factory_handed_on]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", READERS, ids=lambda f: f.__name__)
def test_a_reader_handed_on_or_called_by_another_name_is_differentiated(f, mode):
    check_reader(f, mode)


def check_reader(f, mode):
    """The derivative of the reader f in `mode` (MODES) against finite differences."""
    expected = central_difference(f, X)
    result = MODES[mode](f)
    options = dict(rtol=1e-6, atol=1e-8)
    if mode == "grad" or mode == "function(grad)":
        np.testing.assert_allclose(result, expected, **options)
    elif mode == "value_and_grad":
        assert result[0] == pytest.approx(f(X))
        np.testing.assert_allclose(result[1], expected, **options)
    elif mode in ("forward", "jvp"):
        assert result[0] == pytest.approx(f(X))
        assert result[1] == pytest.approx(np.sum(expected * DIRECTION), rel=1e-6, abs=1e-8)
    elif mode == "vjp":
        np.testing.assert_allclose(result[0], expected, **options)
    elif mode == "hessian":
        rows = [central_difference(lambda p, i=i: autotrace.grad(f)(p)[i], X)
                for i in range(X.size)]
        np.testing.assert_allclose(result, np.array(rows), rtol=1e-5, atol=1e-6)
    else:  # vmap(grad)
        np.testing.assert_allclose(result[0], expected, **options)
        np.testing.assert_allclose(result[1], central_difference(f, -2.0 * X), **options)
