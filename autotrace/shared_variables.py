"""Sharing Variables by name, as TensorFlow 1's `variable_scope` and `get_variable` do.

    def dense(x, units):
        w = autotrace.get_variable("w", (x.shape[-1], units))
        b = autotrace.get_variable("b", (units,), initializer=0.0)
        return x @ w + b

    with autotrace.variable_scope("model"):
        with autotrace.variable_scope("layer1"):
            h = dense(x, 4)                    # makes model/layer1/w and model/layer1/b
    with autotrace.variable_scope("model", reuse=True):
        with autotrace.variable_scope("layer1"):
            h2 = dense(x2, 4)                  # the same two Variables again

`get_variable` looks its full name ("scope/inner/name") up in a store of the Variables it has
made: outside a reusing scope it makes a new one, and a name already there is an error; in a
scope with `reuse=True` it returns the one there, and a missing name is an error; with
`reuse=AUTO_REUSE` it does either. Scopes nest: names join with "/", and a scope inherits
its parent's reuse (once reusing, always reusing inside), initializer and dtype unless it sets
its own. A variable scope is also a name scope (autotrace.name_scope) of the same name.

The store is the one of this process, or the one of a `with autotrace.VariableStore():` block
(a fresh set of names, as a new graph is in TensorFlow). Which scopes are open is per thread.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

import numpy as np

from autotrace.initializers import initial_value
from autotrace.runtime.scopes import name_scope
from autotrace.runtime.state import current_scope
from autotrace.variables import Variable


class _AutoReuse:
    """`reuse=autotrace.AUTO_REUSE` in a variable_scope: get_variable makes a Variable where
    its name is missing, and returns the one made before otherwise (TensorFlow's
    tf.compat.v1.AUTO_REUSE).

    Examples:
        >>> with autotrace.VariableStore() as store:
        ...     for step in range(2):
        ...         with autotrace.variable_scope("shared", reuse=autotrace.AUTO_REUSE):
        ...             v = autotrace.get_variable("v", (1,))   # made, then found
        >>> [variable.name for variable in store.variables()]
        ['shared/v']
    """

    def __repr__(self) -> str:
        return "autotrace.AUTO_REUSE"


AUTO_REUSE = _AutoReuse()


class VariableStore:
    """The Variables `get_variable` has made, by full name. `with VariableStore():` makes a
    fresh one the store of the block (in this thread); `variables()` lists what it holds.

    Examples:
        >>> with VariableStore() as store:
        ...     with autotrace.variable_scope("net"):
        ...         _ = autotrace.get_variable("w", (2,))
        ...         _ = autotrace.get_variable("b", (2,), initializer="zeros")
        >>> [variable.name for variable in store.variables()]
        ['net/w', 'net/b']
    """

    def __init__(self):
        self._variables: dict[str, Variable] = {}
        self._lock = threading.Lock()

    def variables(self) -> list[Variable]:
        """The Variables made, in the order they were made."""
        return list(self._variables.values())

    def __enter__(self) -> "VariableStore":
        _stores().append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        _stores().remove(self)


class VariableScope:
    """An open `variable_scope`: its full `name` ("model/layer1"), `reuse` (False, True or
    AUTO_REUSE), `initializer` and `dtype` for the Variables made in it (None: inherited).

    Examples:
        >>> with autotrace.variable_scope("model", reuse=autotrace.AUTO_REUSE) as scope:
        ...     print(scope.name, scope.reuse is autotrace.AUTO_REUSE)
        model True
    """

    def __init__(self, name: str, reuse=False, initializer=None, dtype=None):
        self.name = name
        self.reuse = reuse
        self.initializer = initializer
        self.dtype = dtype

    def reuse_variables(self) -> None:
        """Reuse Variables from here on in this scope (and the scopes opened inside it)."""
        self.reuse = True

    def __repr__(self) -> str:
        return f"<VariableScope {self.name!r} reuse={self.reuse!r}>"


_DEFAULT_STORE = VariableStore()
_THREAD = threading.local()


def _stores() -> list:
    return _THREAD.__dict__.setdefault("stores", [])


def _scopes() -> list:
    return _THREAD.__dict__.setdefault("scopes", [VariableScope("")])


def _store() -> VariableStore:
    stores = _stores()
    return stores[-1] if stores else _DEFAULT_STORE


def get_variable_scope() -> VariableScope:
    """The variable scope open now in this thread (the root, named "", outside any).

    Examples:
        >>> with autotrace.variable_scope("model"):
        ...     with autotrace.variable_scope("encoder"):
        ...         print(get_variable_scope().name)
        model/encoder
        >>> get_variable_scope().name
        ''
    """
    return _scopes()[-1]


@contextlib.contextmanager
def variable_scope(name_or_scope, reuse=None, initializer=None,
                   dtype=None) -> Iterator[VariableScope]:
    """Open a scope for `get_variable`: the names made inside are `name/...`.

    Arguments:
        name_or_scope: a name, nested inside the scope open now; or a VariableScope (one a
            `with` gave), to open that scope again by its full name.
        reuse: True to return Variables already made instead of making new ones (here and in
            every scope inside), AUTO_REUSE to make them if missing and reuse them otherwise;
            None or False inherit the open scope's.
        initializer: what `get_variable` initializes Variables with where it is not given one
            (a name such as "zeros" or "glorot_uniform", a number, or f(shape, dtype, rng);
            see autotrace/initializers.py); default: the open scope's.
        dtype: the dtype of Variables made here; default: the open scope's (float32 at the
            root).

    Yields:
        the VariableScope.

    Examples:
        >>> with autotrace.variable_scope("foo"):
        ...     with autotrace.variable_scope("bar"):
        ...         v = autotrace.get_variable("v", (1,))
        >>> v.name
        'foo/bar/v'
    """
    if reuse not in (None, False, True) and reuse is not AUTO_REUSE:
        raise ValueError(f"autotrace.variable_scope: reuse must be True, False, None or "
                         f"autotrace.AUTO_REUSE; got {reuse!r}")
    parent = get_variable_scope()
    if isinstance(name_or_scope, VariableScope):
        base, full = name_or_scope, name_or_scope.name
    elif isinstance(name_or_scope, str) and name_or_scope.strip("/"):
        base = parent
        full = "/".join(part for part in (parent.name, name_or_scope.strip("/")) if part)
    else:
        raise ValueError(f"autotrace.variable_scope: name_or_scope must be a non-empty string "
                         f"or a VariableScope; got {name_or_scope!r}")
    # reuse, once on, stays on inside: TensorFlow's `reuse or parent.reuse`
    scope = VariableScope(full, reuse or base.reuse or parent.reuse,
                          base.initializer if initializer is None else initializer,
                          base.dtype if dtype is None else dtype)
    scopes = _scopes()
    scopes.append(scope)
    try:
        with name_scope(full.rsplit("/", 1)[-1] if base is parent else full):
            yield scope
    finally:
        scopes.remove(scope)


def get_variable(name: str, shape=None, dtype=None, initializer=None,
                 trainable: bool = True) -> Variable:
    """The Variable `scope/name` of the variable scope open now: made new, or the one made
    before where the scope reuses (see the module's docstring).

    Arguments:
        name: its name inside the scope.
        shape: its shape; needed to make one unless `initializer` is an array. When reusing,
            a given shape must be the Variable's.
        dtype: its dtype (default: the scope's, else float32); checked when reusing.
        initializer: a name ("zeros", "glorot_uniform", ...), a number, a function
            f(shape, dtype, rng), or an array (its value, shape and all); default: the
            scope's, else "glorot_uniform" for floats and zeros for other dtypes, as in
            TensorFlow.
        trainable: whether optimizers and autotrace.implicit_grad take its gradient.

    Raises:
        ValueError: a name made already, outside a reusing scope; a name not made, in a
            scope with reuse=True; a shape or dtype unlike the Variable's when reusing.

    Examples:
        >>> with autotrace.VariableStore():
        ...     with autotrace.variable_scope("layer"):
        ...         w = get_variable("w", (2, 3), initializer="zeros")
        ...     with autotrace.variable_scope("layer", reuse=True):
        ...         same = get_variable("w")
        >>> w.name, w.shape, same is w
        ('layer/w', (2, 3), True)
    """
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"autotrace.get_variable: name must be a non-empty string without "
                         f"'/' (open a variable_scope to nest names); got {name!r}")
    scope = get_variable_scope()
    full = f"{scope.name}/{name}" if scope.name else name
    store = _store()
    with store._lock:
        existing = store._variables.get(full)
        if scope.reuse is True or (scope.reuse is AUTO_REUSE and existing is not None):
            if existing is None:
                raise ValueError(
                    f"Variable {full} does not exist, or was not created with "
                    f"autotrace.get_variable(). Did you mean to set reuse=autotrace.AUTO_REUSE "
                    f"in the variable_scope?")
            return _shared(existing, full, shape, dtype)
        if existing is not None:
            traced = "" if current_scope() is None else (
                " (A traced function runs its Python code again on the first call, to check "
                "the Variables it makes, and on each new signature: make them there with "
                "reuse=autotrace.AUTO_REUSE.)")
            raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to set "
                             f"reuse=True or reuse=autotrace.AUTO_REUSE in the "
                             f"variable_scope?{traced}")
        variable = _made(full, shape, dtype, initializer, scope, trainable)
        store._variables[full] = variable
        return variable


def _shared(variable: Variable, full: str, shape, dtype) -> Variable:
    if shape is not None and tuple(shape) != tuple(variable.shape):
        raise ValueError(f"Trying to share variable {full}, but specified shape "
                         f"{tuple(shape)} and found shape {tuple(variable.shape)}.")
    if dtype is not None and np.dtype(dtype) != variable.dtype:
        raise ValueError(f"Trying to share variable {full}, but specified dtype "
                         f"{np.dtype(dtype)} and found dtype {variable.dtype}.")
    return variable


def _made(full: str, shape, dtype, initializer, scope: VariableScope,
          trainable: bool) -> Variable:
    dtype = np.dtype(dtype if dtype is not None else scope.dtype or np.float32)
    initializer = initializer if initializer is not None else scope.initializer
    if isinstance(initializer, (np.ndarray, list, tuple)):
        value = np.asarray(initializer, dtype=dtype)
        if shape is not None and tuple(shape) != value.shape:
            raise ValueError(f"autotrace.get_variable: the initializer of {full} is an array "
                             f"of shape {value.shape}, but shape={tuple(shape)} was given")
        return Variable(value, name=full, trainable=trainable)
    if shape is None:
        raise ValueError(f"autotrace.get_variable: shape is needed to make Variable {full} "
                         f"(unless the initializer is an array)")
    if initializer is None:
        initializer = "glorot_uniform" if dtype.kind in "fc" else "zeros"
    value = initial_value(initializer, tuple(int(n) for n in shape), dtype)
    return Variable(np.asarray(value, dtype=dtype), name=full, trainable=trainable)
