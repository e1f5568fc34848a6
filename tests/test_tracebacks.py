"""What a user sees when a call into autotrace fails and nothing catches the error: one
traceback, autotrace's message for them, and the lines of generated code it passes through.

Each case runs in a fresh interpreter and is printed by the interpreter's own `sys.excepthook`
(the hook an uncaught exception meets), so the text checked is the text a user reads.
"""
from __future__ import annotations

import linecache
import os
import re
import subprocess
import sys
import traceback

import numpy as np

import autotrace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


def run_python(arguments: list, *, stdin: str | None = None) -> str:
    """The standard error of a fresh Python running autotrace of this checkout."""
    result = subprocess.run([sys.executable, *arguments], input=stdin, text=True,
                            capture_output=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": ROOT, "PYTHONWARNINGS": "ignore"})
    return result.stderr


def assert_one_traceback(printed: str) -> None:
    assert printed.count("Traceback (most recent call last):") == 1, printed
    assert not any(phrase in printed for phrase in CHAINED), printed


# --- at the interactive prompt: the source cannot be read, the derivative comes from a trace ---

PROMPT_SESSION = """\
import numpy as np
import autotrace
def converts(x):
    return float(x) * 2.0

autotrace.grad(converts)(np.ones(3))
def mismatched(x, w):
    return np.sum(x @ w)

autotrace.grad(mismatched)(np.ones((2, 3)), np.ones((4, 5)))
def raises_its_own(x):
    raise KeyError("the user's own")

autotrace.grad(raises_its_own)(np.ones(3))
"""


def prompt_failures() -> list:
    """The text printed for each failing statement of PROMPT_SESSION, in order."""
    printed = run_python(["-i", "-q"], stdin=PROMPT_SESSION)
    return [chunk for chunk in re.split(r"(?:>>> |\.\.\. )+", printed) if "Traceback" in chunk]


def test_failures_at_the_prompt_print_one_traceback_each():
    converts, mismatched, own = prompt_failures()
    for printed in (converts, mismatched, own):
        assert_one_traceback(printed)
    assert ("autotrace.transforms.errors.TransformError: the source of 'converts' cannot be "
            "read (it was typed at an interactive prompt or made by exec, or calls a function "
            "that was), so autotrace differentiates a trace of it, and tracing it failed: "
            "TracerConversionError: cannot convert a traced value to a Python float") in converts
    assert 'File "<stdin>", line 2, in converts' in converts
    assert ("tracing it failed: ValueError: matmul: shapes (2, 3) and (4, 5) do not match in "
            "their core dimension (3 != 4)\n") in mismatched
    # the user's own error reaches them as their code raised it, from their line
    assert own.rstrip().endswith('File "<stdin>", line 2, in raises_its_own\n'
                                 "KeyError: \"the user's own\""), own


# --- in a file: refusals, a branch that fails while traced, generated code that fails ---------

SCRIPT = '''\
import sys
import threading

import numpy as np
import autotrace


def show(call):
    """Print the error of call() as the interpreter prints an uncaught one."""
    try:
        call()
    except Exception as error:
        print("=== case", file=sys.stderr)
        sys.excepthook(type(error), error, error.__traceback__)


def soft_clip(x):
    try:  # autotrace cannot differentiate try: only a rule gives a derivative
        return 2.0 * np.tanh(x)
    except FloatingPointError:
        return x


@autotrace.register_tangent(soft_clip)
def soft_clip_tangent(y, x):
    d[y] = d[x] * 2.0 * (1.0 - np.tanh(x) ** 2)


def energy(x):
    return np.sum(soft_clip(3.0 * x) ** 2)


def fails_in_a_branch(x):
    if x[0] > 0:
        y = x * 2.0
    else:
        y = x + np.ones(4)
    return np.sum(y)


def tanh_layer(x, w):
    y = x @ w
    return np.sum(np.tanh(y))


gradient = autotrace.grad(tanh_layer)
show(lambda: autotrace.grad(energy)(np.ones(3)))
show(lambda: autotrace.function(fails_in_a_branch)(np.ones(3)))
show(lambda: gradient(np.ones((2, 3)), np.ones((4, 5))))
show(lambda: autotrace.function(gradient)(np.ones((2, 3)), np.ones((4, 5))))


print("=== case", file=sys.stderr)
thread = threading.Thread(target=gradient, args=(np.ones((2, 3)), np.ones((4, 5))),
                          name="worker")
thread.start()  # its uncaught error, as the thread's default hook prints it
thread.join()


def users_hook(kind, error, trace):
    print("the user's hook:", error, file=sys.stderr)


sys.excepthook = users_hook  # a hook the user set is kept as more code is generated
autotrace.grad(tanh_layer, wrt=1)
print("=== case", file=sys.stderr)
print("the user's hook is kept:", sys.excepthook is users_hook, file=sys.stderr)
'''


def script_failures(tmp_path) -> list:
    path = tmp_path / "failing.py"
    path.write_text(SCRIPT)
    return run_python([str(path)]).split("=== case\n")[1:]


def test_failures_in_a_file_print_one_traceback_each_with_generated_lines(tmp_path):
    refused, branch, generated, traced, in_thread, hook = script_failures(tmp_path)
    assert hook == "the user's hook is kept: True\n"
    for printed in (refused, branch, generated, traced, in_thread):
        assert_one_traceback(printed)
    assert ("autotrace.transforms.errors.TransformError: File \"" in refused and
            "no derivative rule for __main__.soft_clip; it has a tangent rule" in refused)
    assert ("BranchValueError: " in branch and
            "the false branch of this traced `if` fails while it is traced" in branch)
    # the generated derivative's failing line is shown under its file name, as a file's is
    generated_line = r'File "<autotrace dtanh_layer #\d+>", line 3, in dtanh_layer\n    y = x @ w\n'
    assert re.search(generated_line, generated), generated
    assert generated.rstrip().endswith("(size 4 is different from 3)")
    assert re.search(generated_line, traced), traced
    assert in_thread.startswith("Exception in thread worker:\nTraceback (most recent call last):")
    assert re.search(generated_line, in_thread), in_thread
    line = SCRIPT.splitlines().index("    y = x @ w") + 1  # the user's line, named under
    assert traced.rstrip().endswith("match in their core dimension (3 != 4)\n"  # the message
                                    f'  File "{tmp_path / "failing.py"}", line {line}\n'
                                    "    y = x @ w")


# --- linecache: generated lines stay readable ---------------------------------------------------

def tanh_layer(x, w):
    y = x @ w
    return np.sum(np.tanh(y))


def test_generated_lines_survive_checkcache_and_show_in_formatted_tracebacks():
    gradient = autotrace.grad(tanh_layer)
    filename = gradient.__code__.co_filename
    assert filename.startswith("<autotrace ")
    linecache.checkcache()  # as the traceback module does before reading lines
    lines = [linecache.getline(filename, n) for n in range(1, 4)]
    assert lines[0].startswith("def ") and "    y = x @ w\n" in lines
    try:
        gradient(np.ones((2, 3)), np.ones((4, 5)))
    except ValueError as error:
        printed = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert f'File "{filename}", line {lines.index("    y = x @ w" + chr(10)) + 1}' in printed
    assert "\n    y = x @ w\n" in printed



def _made_square():
    def square(x):
        return x * x
    return square


def test_code_collected_while_linecache_walks_its_cache_leaves_it_after_the_walk(monkeypatch):
    """linecache.checkcache() takes a list of the names, then reads each entry; the collector
    may run in between (any allocation can start it). The lines of a derivative collected
    there must stay until the walk is over (before, checkcache raised KeyError), and go at
    the next registration; collected anywhere else, they go at once."""
    import gc

    before = set(linecache.cache)
    derivative = autotrace.grad(_made_square())
    derivative(np.float64(2.0))
    ours = {name for name in set(linecache.cache) - before if name.startswith("<autotrace ")}
    assert ours, "no generated source was registered"
    held = [derivative]
    del derivative

    class CollectedDuringTheWalk(dict):
        def __getitem__(self, name):
            if held:  # the first entry read: the derivative dies and is collected here
                held.clear()
                gc.collect()
            return super().__getitem__(name)

    monkeypatch.setattr(linecache, "cache", CollectedDuringTheWalk(linecache.cache))
    linecache.checkcache()  # raised KeyError when the collector dropped an entry
    assert ours <= set(linecache.cache)
    before = set(linecache.cache)
    later = autotrace.grad(_made_square())
    later(np.float64(3.0))  # a registration drops what was collected during the walk
    assert not ours & set(linecache.cache)
    made_outside = {name for name in set(linecache.cache) - before
                    if name.startswith("<autotrace ")}
    assert made_outside
    del later
    gc.collect()
    assert not made_outside & set(linecache.cache)  # collected outside a walk: gone at once
