"""How a derivative keeps its function's namespace and source: globals, closure variables and
defaults are read when the derivative runs, as the primal reads them; a rebound function it was
generated for is refused; a source file edited after import is refused; derivatives are cached
per function; transforming from several threads at once is safe."""
import importlib.util
import itertools
import re
import sys
import textwrap

import numpy as np
import pytest

import autotrace as at
from autotrace.transforms.errors import TransformError
from autotrace.transforms.analysis.live_names import StaleDerivativeError

_modules = itertools.count()


def load_module(tmp_path, text: str):
    """Write `text` as a module in tmp_path and import it (each call a new module)."""
    module_name = f"lifecycle_module_{next(_modules)}"
    path = tmp_path / f"{module_name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


LOSS = """
    import numpy as np
    LR = 1.0

    def loss(w):
        return LR * np.sum(w ** 2)

    def outer(w):
        return 2.0 * loss(w)
"""


# --- globals, closure variables and defaults are read when the derivative runs ------------------

def test_a_global_rebound_after_value_and_grad_is_read_when_it_runs(tmp_path):
    module = load_module(tmp_path, LOSS)
    value_and_grad = at.value_and_grad(module.loss)
    module.LR = 10.0
    value, gradient = value_and_grad(np.array([1.0]))
    assert value == 10.0 and np.allclose(gradient, [20.0])


def test_every_transform_reads_globals_when_it_runs(tmp_path):
    module = load_module(tmp_path, LOSS)
    w = np.array([1.0, 2.0])
    gradient, forward = at.grad(module.loss), at.forward(module.loss)
    hessian, hvp = at.hessian(module.loss), at.hvp(module.loss)
    second = at.forward(at.grad(module.loss))
    of_caller = at.grad(module.outer)  # the global of a function the differentiated one calls
    module.LR = 3.0
    assert np.allclose(gradient(w), 6.0 * w)
    assert np.allclose(forward(w, tangent=np.array([1.0, 0.0])), (15.0, 6.0))
    assert np.allclose(hessian(w), 6.0 * np.eye(2))
    assert np.allclose(hvp(w, np.array([0.0, 1.0])), [0.0, 6.0])
    assert np.allclose(second(w, tangent=np.array([1.0, 0.0]))[1], [6.0, 0.0])
    assert np.allclose(of_caller(w), 12.0 * w)


def test_grad_of_grad_reads_globals_when_it_runs(tmp_path):
    module = load_module(tmp_path, """
        LR = 1.0

        def cubic(x):
            return LR * x ** 3
    """)
    second = at.grad(at.grad(module.cubic))
    assert second(2.0) == 12.0
    module.LR = 2.0
    assert second(2.0) == 24.0


def test_implicit_grad_reads_globals_when_it_runs(tmp_path):
    module = load_module(tmp_path, """
        import numpy as np
        import autotrace
        SCALE = 1.0
        W = autotrace.Variable(np.array([1.0, 2.0]))

        def loss():
            return SCALE * np.sum(W ** 2)
    """)
    implicit = at.implicit_grad(module.loss)
    assert np.allclose(implicit()[0][0], [2.0, 4.0])
    module.SCALE = 5.0
    assert np.allclose(implicit()[0][0], [10.0, 20.0])


def test_a_nonlocal_rebinding_reaches_the_derivative():
    def make():
        scale = 1.0

        def f(x):
            return scale * x * x

        def set_scale(value):
            nonlocal scale
            scale = value
        return f, set_scale
    f, set_scale = make()
    gradient = at.grad(f)
    assert gradient(2.0) == 4.0
    set_scale(3.0)
    assert gradient(2.0) == 12.0 == 3.0 * 2 * 2.0


def test_defaults_are_the_functions_own_read_when_the_derivative_runs(tmp_path):
    module = load_module(tmp_path, """
        C = 1.0

        def h(x, k=C * 2):
            return k * x * x

        def kw(x, *, k=2.0):
            return k * x * x

        def calls_h(x):
            return h(x)
        C = 5.0  # rebinding C after the def leaves h's default at 2.0, as Python does
    """)
    gradient, of_caller, forward = at.grad(module.h), at.grad(module.calls_h), \
        at.forward(module.h)
    assert gradient(3.0) == of_caller(3.0) == 12.0
    module.h.__defaults__ = (3.0,)
    assert gradient(3.0) == of_caller(3.0) == 18.0
    assert forward(3.0) == (27.0, 18.0)
    assert at.grad(module.h, wrt="k")(3.0) == 9.0
    kw_gradient = at.grad(module.kw)
    module.kw.__kwdefaults__ = {"k": 4.0}
    assert kw_gradient(1.0) == 8.0 and kw_gradient(1.0, k=3.0) == 6.0


def test_defaults_of_lambdas_made_in_a_comprehension():
    scaled = [lambda x, k=k: k * x * x for k in (1.0, 2.0)]
    assert [at.grad(f)(1.0) for f in scaled] == [2.0, 4.0]


def test_a_rebound_function_the_derivative_was_generated_for_is_refused(tmp_path):
    module = load_module(tmp_path, """
        import numpy as np

        def activation(x):
            return np.tanh(x)

        def loss(x):
            return np.sum(activation(x))
    """)
    gradient = at.grad(module.loss)
    x = np.array([0.5])
    assert np.allclose(gradient(x), 1 - np.tanh(0.5) ** 2)
    module.activation = np.sin
    with pytest.raises(StaleDerivativeError, match=re.escape(
            "'activation' was <function activation at")) as error:
        gradient(x)
    assert error.value.filename == module.__file__
    assert "Call autotrace.grad (or the transform you used) again" in str(error.value)
    assert np.allclose(at.grad(module.loss)(x), np.cos(0.5))  # made again: the new function


def test_a_global_list_becoming_a_number_is_refused(tmp_path):
    module = load_module(tmp_path, """
        WEIGHTS = [1.0, 2.0]

        def f(x):
            return WEIGHTS[0] * x
    """)
    gradient = at.grad(module.f)
    module.WEIGHTS = [3.0]
    assert gradient(1.0) == 3.0
    module.WEIGHTS = 2.0
    with pytest.raises(StaleDerivativeError, match="'WEIGHTS' was"):
        gradient(1.0)


def test_an_integer_global_may_become_a_float_not_the_other_way(tmp_path):
    module = load_module(tmp_path, """
        SCALE = 2

        def f(x):
            return SCALE * x * x
    """)
    gradient = at.grad(module.f)
    module.SCALE = 0.5
    assert gradient(2.0) == 2.0
    module = load_module(tmp_path, """
        SCALE = 0.5

        def f(x):
            return SCALE * x * x
    """)
    inexact = at.grad(module.f)
    module.SCALE = 3  # `SCALE * x` may repeat a list now: the code for a float cannot say
    with pytest.raises(StaleDerivativeError, match="'SCALE' was 0.5 .* and is now 3;"):
        inexact(2.0)


def test_traced_functions_keep_the_values_of_trace_time(tmp_path):
    # autotrace.function follows tf.function: Python values are constants of the traced graph.
    module = load_module(tmp_path, LOSS)
    step = at.function(at.grad(module.loss))
    w = np.array([1.0, 2.0])
    assert np.allclose(step(w), 2.0 * w)
    module.LR = 10.0
    assert np.allclose(step(w), 2.0 * w)
    assert np.allclose(at.grad(module.loss)(w), 20.0 * w)  # eager code reads it now


# --- derivatives are made once per function, and their lines go with them ---------------------

def test_grad_in_a_loop_transforms_once(tmp_path, monkeypatch):
    module = load_module(tmp_path, LOSS)
    import autotrace.transforms.front.front_end as front_end
    parsed = []
    parse = front_end.parse_function
    monkeypatch.setattr(front_end, "parse_function", lambda f: parsed.append(f) or parse(f))
    w = np.array([1.0, 2.0])
    for _ in range(100):
        assert np.allclose(at.grad(module.outer)(w), 4.0 * w)
    assert parsed == [module.outer, module.loss]  # the caller, and the function it calls
    assert at.grad(module.outer) is at.grad(module.outer)
    assert at.grad(module.outer, wrt="w") is not at.grad(module.outer)
    assert at.value_and_grad(module.outer) is not at.grad(module.outer)
    transforms = len(parsed)
    module.LR = 2.0  # a cached derivative reads globals when it runs
    assert np.allclose(at.grad(module.outer)(w), 8.0 * w) and len(parsed) == transforms


def test_a_reassigned_code_object_is_transformed_again():
    def f(x):
        return x * x

    def cube(x):
        return x * x * x
    first = at.grad(f)
    f.__code__ = cube.__code__
    assert first(2.0) == 4.0 and at.grad(f)(2.0) == 12.0


def test_the_cache_does_not_keep_a_function_alive():
    import gc
    import weakref

    def make():
        return lambda x: 3.0 * x * x
    f = make()
    gradient = at.grad(f)
    assert gradient(1.0) == 6.0
    alive = weakref.ref(f)
    del f, gradient
    gc.collect()
    assert alive() is None


def test_linecache_stays_bounded_over_many_grad_calls():
    import gc
    import linecache
    gc.collect()
    before = len(linecache.cache)
    for index in range(60):  # a fresh lambda each time: 60 transforms, each kept would pass 20
        assert at.grad(lambda x: x * x)(float(index)) == 2.0 * index
    def loss(w):
        return np.sum(w ** 2)
    for _ in range(600):  # one function: one transform
        at.grad(loss)(np.ones(2))
    gc.collect()
    assert len(linecache.cache) - before < 20


def test_generated_code_shows_in_inspect_and_tracebacks():
    import inspect
    import traceback

    def f(x):
        return np.sum(x ** 2)
    gradient = at.grad(f)
    assert inspect.getsource(gradient) == at.source(gradient)
    with pytest.raises(TypeError) as error:
        gradient("text")
    lines = "".join(traceback.format_exception(error.value))
    assert re.search(r'File "<autotrace df #\d+>", line \d+, in df\n    \S', lines), lines


# --- transforms from several threads ------------------------------------------------------------

def test_grad_of_many_functions_from_eight_threads(tmp_path):
    import threading
    count = 48
    module = load_module(tmp_path, "import numpy as np\n" + "".join(
        f"def f{k}(x):\n    y = np.sin(x) * {k}.0 + x * x\n    return np.sum(y * x)\n"
        for k in range(count)))
    x = np.array([0.5, 1.5])
    results, errors = {}, []

    def work(first: int):
        for k in range(first, count, 8):
            try:
                results[k] = at.grad(getattr(module, f"f{k}"))(x)
            except Exception as error:  # collected, and the test fails naming it
                errors.append(error)
    threads = [threading.Thread(target=work, args=(first,)) for first in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for k in range(count):  # d/dx (k sin(x) x + x^3) = k (cos(x) x + sin(x)) + 3 x^2
        assert np.allclose(results[k], k * (np.cos(x) * x + np.sin(x)) + 3 * x ** 2)


def test_a_derivative_made_while_running_is_made_again_after_a_rebinding(tmp_path):
    # Calls resolved only when the derivative runs (a function passed as an argument) are
    # differentiated then, and kept: a kept one must not outlive what it was made for.
    module = load_module(tmp_path, """
        import numpy as np

        def activation(x):
            return np.tanh(x)

        def inner(x):
            return activation(x)

        def apply(g, x):
            return g(x) * 1.0
    """)
    gradient = at.grad(module.apply, wrt=1)
    assert np.isclose(gradient(module.inner, 0.5), 1 - np.tanh(0.5) ** 2)
    module.activation = np.sin
    assert np.isclose(gradient(module.inner, 0.5), np.cos(0.5))


# --- a source file edited after import ------------------------------------------------------------

EDITED = """
    import numpy as np

    def loss(w):
        return np.sum(w ** 2)

    def unchanged(w):
        return np.sum(w ** 3)
"""


@pytest.mark.parametrize("edit, changed", [
    (lambda text: text.replace("w ** 2", "w ** 4"), True),  # a constant
    (lambda text: text.replace("np.sum(w ** 2)", "np.sum(w * 2)"), True),  # an operator
    (lambda text: text.replace("import numpy as np\n", "import numpy as np\n\n\n"), True),
    (lambda text: text + "\n\ndef added(w):\n    return w\n", False),  # below: still the same
])
def test_a_source_file_edited_after_import_is_refused(tmp_path, edit, changed):
    module = load_module(tmp_path, EDITED)
    path = tmp_path / f"{module.__name__}.py"
    path.write_text(edit(path.read_text()))
    w = np.array([1.0, 2.0])
    if not changed:
        assert np.allclose(at.grad(module.loss)(w), 2 * w)
        return
    with pytest.raises(TransformError) as error:
        at.grad(module.loss)
    message = str(error.value)
    assert message.startswith(f'File "{path}", line ') and (
        f"the source of 'loss' in {path} has changed since it was imported" in message)
    assert "Reload the module (importlib.reload) or restart Python" in message
    reloaded = load_module(tmp_path, edit(textwrap.dedent(EDITED)))  # as after a restart
    assert np.allclose(at.grad(reloaded.loss)(w), 2 * w if "w ** 2" in path.read_text()
                       else 4 * w ** 3 if "w ** 4" in path.read_text() else 2.0)


def test_a_file_edited_after_a_derivative_was_made_is_read_again(tmp_path):
    # The tree read for the first derivative is kept on the function; an edit to the file
    # makes the next derivative read the file again, and refuse it.
    module = load_module(tmp_path, EDITED)
    path = tmp_path / f"{module.__name__}.py"
    w = np.array([1.0, 2.0])
    assert np.allclose(at.grad(module.loss)(w), 2 * w)
    path.write_text(path.read_text().replace("w ** 2", "w ** 4"))
    with pytest.raises(TransformError, match="has changed since it was imported"):
        at.forward(module.loss)


def test_closures_methods_and_lambdas_match_their_source():
    scale = 2.0

    def closure(x):
        return scale * x * x

    class Model:
        def __init__(self):
            self.w = 3.0

        def predict(self, x):
            return self.w * x * x

    def counter(x):
        total = x
        add = lambda y: total * y  # noqa: E731
        return sum(add(v) for v in [x, x])
    lam = lambda x: (lambda y: y * scale)(x) * x  # noqa: E731
    assert at.grad(closure)(1.0) == 4.0
    assert at.grad(Model().predict)(1.0) == 6.0
    assert at.grad(lam)(1.0) == 4.0
    assert at.grad(counter)(1.0) == 4.0


def test_implicit_grad_is_made_again_after_a_rebinding(tmp_path):
    module = load_module(tmp_path, """
        import numpy as np
        import autotrace
        W = autotrace.Variable(np.array([1.0, 2.0]))

        def activation(x):
            return x * x

        def loss():
            return np.sum(activation(W))
    """)
    assert np.allclose(at.implicit_grad(module.loss)()[0][0], [2.0, 4.0])
    module.activation = np.sin
    assert np.allclose(at.implicit_grad(module.loss)()[0][0], np.cos([1.0, 2.0]))


LOOPING = """
    def f(x):
        i, s = 0, 0.0
        while i < 3:
            i += 1
            if x[i - 1] > 0:
                continue
            s = s + x[i - 1] ** 2
        return s
"""


@pytest.mark.parametrize("edit", [lambda text: text.replace("continue", "break"),
                                  lambda text: text.replace("while i < 3", "while i < 2")])
def test_an_edit_that_moves_where_a_jump_lands_is_refused(tmp_path, edit):
    # (continue and break differ only in where their jump lands)
    module = load_module(tmp_path, LOOPING)
    path = tmp_path / f"{module.__name__}.py"
    path.write_text(edit(path.read_text()))
    with pytest.raises(TransformError, match="has changed since it was imported"):
        at.grad(module.f)(np.array([1.0, -2.0, -3.0]))


def test_a_condition_over_several_lines_is_the_source_that_runs():
    # (Python 3.11 names a jump's direction, which the line layout decides: the condition
    # split over lines was taken for an edited file)
    def split_lines(x, flags):
        keep = [i for i in range(len(flags)) if (flags[i] > 0 or flags[i] < -5)
                and i != 2 and i != 7]
        return np.sum(x[keep] ** 2)
    x = np.arange(4.0)
    np.testing.assert_array_equal(at.grad(split_lines)(x, [1, -1, 3, -9]), [0.0, 0.0, 0.0, 6.0])
