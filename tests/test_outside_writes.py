"""A helper that stores a value carrying gradient outside the differentiated function's own
variables (the class of an object, the module's globals, an item of a module-level array,
dict or list) is refused at the user's call: what reads it back reads a constant."""
import numpy as np
import pytest

import autotrace


class Box:
    k = 2.0

    def bump(self, v):
        type(self).k = v


TABLE = np.zeros(3)
SETTINGS = {"k": 2.0}
HISTORY = [2.0]
K = 2.0


def set_global(v):
    globals()["K"] = v


def set_table(v):
    TABLE[0] = v


def set_setting(v):
    SETTINGS["k"] = v


def record(v):
    HISTORY.append(v)


def through_type(x):
    Box().bump(x[0])
    return Box.k ** 2 * x[1]


def through_globals(x):
    set_global(x[0])
    return K ** 2 * x[1]


def through_array(x):
    set_table(x[0])
    return TABLE[0] ** 2 * x[1]


def through_dict(x):
    set_setting(x[0])
    return SETTINGS["k"] ** 2 * x[1]


def through_list(x):
    record(x[0])
    return HISTORY[-1] ** 2 * x[1]


def _with_a_closure():
    totals = np.zeros(3)

    def add_total(v):
        totals[1] += v

    def through_closure(x):
        add_total(x[0])
        return totals[1] ** 2 * x[1]
    return through_closure, add_total


through_closure, add_total = _with_a_closure()


def _reset():
    Box.k, SETTINGS["k"], TABLE[:] = 2.0, 2.0, 0.0
    globals()["K"] = 2.0
    del HISTORY[1:]


def _line(f):
    return f.__code__.co_firstlineno


ITEM = "an item of the global {!r} ({}, " + __file__ + ", line {})"
CASES = [
    (through_type, "Box.bump", "the class attribute type(self).k (type(self).k = ..., "
     f"{__file__}, line {_line(Box.bump) + 1})", "pass the value as an argument to what "
     "reads type(self).k, or keep it on the instance instead"),
    (through_globals, "set_global", "a global through globals()['K'] (globals()['K'] = ..., "
     f"{__file__}, line {_line(set_global) + 1})", "return the value instead"),
    (through_array, "set_table", ITEM.format("TABLE", "TABLE[0] = ...", _line(set_table) + 1),
     "return the value instead, or pass it as an argument to what reads it"),
    (through_dict, "set_setting", ITEM.format("SETTINGS", "SETTINGS['k'] = ...",
                                              _line(set_setting) + 1), "return the value"),
    (through_closure, "_with_a_closure.<locals>.add_total", "an item of the closure variable "
     f"'totals' (totals[1] += ..., {__file__}, line {_line(add_total) + 1})", "return the value"),
    (through_list, "record", ITEM.format("HISTORY", "HISTORY.append(...)", _line(record) + 1),
     "return the value"),
]
MODES = [
    autotrace.grad, autotrace.hessian,
    lambda f: lambda x: autotrace.jvp(f, (x,), (np.ones(3),)),
    lambda f: autotrace.function(autotrace.grad(f)),
    lambda f: lambda x: autotrace.vmap(autotrace.grad(f))(x[None]),
]


@pytest.mark.parametrize("f, callee, what, instead", CASES)
@pytest.mark.parametrize("mode", MODES)
def test_value_with_gradient_stored_outside_is_refused(f, callee, what, instead, mode):
    # The gradient was [0, 0.25, 0] where it is [-1, 0.25, 0] (the read back was a constant).
    _reset()
    try:
        with pytest.raises(autotrace.TransformError) as error:
            mode(f)(np.array([0.5, -1.0, 2.0]))
    finally:
        _reset()
    message = str(error.value)
    assert f"line {_line(f) + 1}: autotrace cannot differentiate this call of {callee}: it " \
           f"sets {what} to a value that carries gradient" in message
    assert instead in message


def constants_stored_outside(x):
    Box().bump(3.0)
    set_global(3.0)
    set_table(3.0)
    set_setting(3.0)
    record(3.0)
    return (Box.k + K + TABLE[0] + SETTINGS["k"] + HISTORY[-1]) * x[1] ** 2


def test_constants_stored_outside_are_followed():
    _reset()
    try:
        np.testing.assert_allclose(autotrace.grad(constants_stored_outside)(
            np.array([0.5, -1.0, 2.0])), [0.0, -30.0, 0.0])
    finally:
        _reset()


LOSSES = []


def _log_loss(value):
    LOSSES.append(float(value))  # a Python number: no gradient to lose


def _loss_logged(w):
    loss = np.sum(w ** 2)
    _log_loss(loss)
    return loss


def test_a_helper_logging_a_python_number_of_a_value_is_followed():
    w = np.array([1.0, 2.0])
    LOSSES.clear()
    np.testing.assert_allclose(autotrace.grad(_loss_logged)(w), 2 * w)
    assert LOSSES == [5.0]
