"""The command line (`python -m autotrace grad|graph FILE.py::FUNCTION`), the DOT text of
graphs (runtime/execution/graph_dot.py) and the array types `--spec` reads (`Spec.parse`).

The commands run in a fresh interpreter on files written to tmp_path, as a user runs them;
the messages for mistakes and the methods of classes are checked by calling the command line's
main in this process (`run_main`), which is quicker.
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import autotrace
from autotrace import cli
from autotrace.runtime.execution.graph_dot import graph_dot
from autotrace.runtime.tracing.spec import Spec

ROOT = Path(__file__).resolve().parents[1]

MODEL = """\
import numpy as np
from helpers import offset


def f(x, y):
    return x * y + np.sin(x)


def shifted(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = -x
    return y - offset()


def doubled_until(x):
    while np.sum(x) < 10.0:
        x = x * 2.0
    return x


limit = 3

if __name__ == "__main__":
    raise SystemExit("the command line must not run the file's main block")
"""

HELPERS = """\
import numpy as np


def offset():
    return np.array([1.0, 2.0, 3.0])
"""


@pytest.fixture
def model(tmp_path) -> Path:
    """model.py, which imports helpers.py from its own folder."""
    (tmp_path / "helpers.py").write_text(HELPERS)
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def run_command(*arguments, cwd) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in environment.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.run([sys.executable, "-m", "autotrace", *arguments], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=120)


def succeeds(*arguments, cwd, wrote: str = "") -> str:
    """Standard output of a command that succeeds; `wrote` is what it says on standard error
    (the files it wrote)."""
    result = run_command(*arguments, cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert result.stderr == wrote
    return result.stdout


def run_main(*arguments, cwd, monkeypatch, capsys) -> tuple:
    """(exit status, standard output, standard error) of the command line run in this process,
    in the folder `cwd`."""
    monkeypatch.chdir(cwd)
    status = cli.main(list(arguments))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- grad -----------------------------------------------------------------------------------------

def test_grad_prints_the_generated_adjoint_source(model):
    printed = succeeds("grad", "model.py::f", "--wrt", "x,y", cwd=model.parent)
    assert printed == textwrap.dedent("""\
        def df(x, y, *, dy=None):
            # Primal sweep
            _t1 = x * y
            _t2 = np.sin(x)
            # Adjoint sweep
            # Grad of line 6: return x * y + np.sin(x)
            b_t3 = seed(_t1 + _t2, dy)
            b_t1 = unbroadcast(b_t3, _t1)
            bx = unbroadcast(b_t3, _t2) * np.cos(x)
            bx = accumulate(bx, unbroadcast(b_t1 * y, x))
            by = unbroadcast(b_t1 * x, y)
            return fresh_gradients((match(bx, x), match(by, y)))
        """)
    # The code printed computes the right thing: df/dx = y + cos(x), df/dy = x.
    def f(x, y):
        return x * y + np.sin(x)
    gradient = autotrace.grad(f, wrt=("x", "y"))(2.0, 3.0)
    assert gradient == pytest.approx((3.0 + np.cos(2.0), 2.0), abs=1e-15)


def test_grad_raw_is_the_source_before_the_cleanup_passes(model):
    raw = succeeds("grad", "model.py::f", "--wrt", "0,1", "--raw", cwd=model.parent)
    # What grad(f, wrt=(0, 1), optimized=False) generates: every temporary and term kept.
    assert raw == textwrap.dedent("""\
        def df(x, y, *, dy=None):
            # Primal sweep
            _t1 = x * y
            _t2 = np.sin(x)
            _t3 = _t1 + _t2
            # Adjoint sweep
            # Grad of line 6: return x * y + np.sin(x)
            b_t3 = seed(_t3, dy)
            b_t1_term = unbroadcast(b_t3, _t1)
            b_t2_term = unbroadcast(b_t3, _t2)
            b_t1 = b_t1_term
            b_t2 = b_t2_term
            bx_term = b_t2 * np.cos(x)
            bx = bx_term
            bx_term_1 = unbroadcast(b_t1 * y, x)
            by_term = unbroadcast(b_t1 * x, y)
            bx = accumulate(bx, bx_term_1)
            by = by_term
            return fresh_gradients((match(bx, x), match(by, y)))
        """)


def test_grad_forward_mode_prints_the_tangent_source(model):
    printed = succeeds("grad", "model.py::f", "--wrt", "x,y", "--mode", "forward",
                       cwd=model.parent)
    assert printed.splitlines() == [
        "def ff(x, y, *, tangent=None):",
        "    refuse_integral_argument(x)",
        "    refuse_integral_argument(y)",
        "    check_tangents(('x', 'y'), (x, y), tangent)",
        "    dx, dy = tangent_seed((x, y), tangent)",
        "    return (x * y + np.sin(x), fresh_tangent(dx * y + dy * x + read_as_array(dx) * "
        "np.cos(x)))",
    ]


# --- graph ----------------------------------------------------------------------------------------

def test_graph_prints_the_optimized_graph_for_the_specs(model):
    printed = succeeds("graph", "model.py::f", "--spec", "f64[?,4]", "--spec", "f64[4]",
                       cwd=model.parent)
    assert printed == textwrap.dedent("""\
        { lambda x:f64[?,4] y:f64[4] ;
          c:f64[?,4] = multiply x y
          d:f64[?,4] = sin x
          e:f64[?,4] = add[out=0] c d
          in (e) }
        """)


def _statements(dot: str) -> tuple:
    """The node statements (name -> label) and edges (source, target) of DOT text."""
    nodes = dict(re.findall(r'^\s*(n\d+) \[label="((?:[^"\\]|\\.)*)"', dot, re.MULTILINE))
    edges = re.findall(r"^\s*(n\d+) -> (n\d+)", dot, re.MULTILINE)
    return nodes, edges


def test_graph_dot_has_a_node_per_input_equation_and_output(model):
    dot = succeeds("graph", "model.py::f", "--spec", "f64[3,4]", "--spec", "f64[4]", "--dot",
                   cwd=model.parent)
    nodes, edges = _statements(dot)
    assert list(nodes.values()) == [r"x\nf64[3,4]", r"y\nf64[4]", r"multiply\nc: f64[3,4]",
                                    r"sin\nd: f64[3,4]", r"add[out=0]\ne: f64[3,4]",
                                    r"out 0\nf64[3,4]"]
    assert edges == [("n0", "n2"), ("n1", "n2"), ("n0", "n3"), ("n2", "n4"), ("n3", "n4"),
                     ("n4", "n5")]
    assert dot.startswith('digraph "f" {\n') and dot.endswith("}\n")
    # Written to a file, the same text; nothing on standard output.
    assert succeeds("graph", "model.py::f", "--spec", "f64[3,4]", "--spec", "f64[4]", "--dot",
                    "f.dot", cwd=model.parent, wrote="wrote f.dot\n") == ""
    assert (model.parent / "f.dot").read_text() == dot


def test_graph_dot_draws_a_conds_branches_as_clusters(model):
    dot = succeeds("graph", "model.py::shifted", "--spec", "f64[3]", "--dot", cwd=model.parent)
    nodes, edges = _statements(dot)
    assert re.findall(r'subgraph (cluster_\d+) \{\n\s*label="([^"]*)"', dot) == [
        ("cluster_0", "cond: true"), ("cluster_1", "cond: false")]
    labels = list(nodes.values())
    assert r"cond\nd: f64[3]" in labels and r"negative\nb: f64[3]" in labels
    assert r"const0: f64[3]" in labels and "2.0" in labels  # a constant and a literal
    # Inputs a (outer, true, false), 4 equations outside, 2 inside, literals 0 and 2.0,
    # the constant, and an output in each branch and outside.
    assert len(nodes) == 3 + 4 + 2 + 2 + 1 + 3
    cond_node = next(name for name, label in nodes.items() if label.startswith("cond"))
    assert dot.count(f' -> {cond_node} [style=dashed, label="') == 2


def test_graph_dot_is_the_same_text_every_time(model):
    first = succeeds("graph", "model.py::doubled_until", "--spec", "f64[3]", "--dot",
                     cwd=model.parent)
    second = succeeds("graph", "model.py::doubled_until", "--spec", "f64[3]", "--dot",
                      cwd=model.parent)
    assert first == second
    assert re.findall(r'label="(while: \w+)"', first) == ["while: cond", "while: body"]


def test_graph_dot_parses_with_graphviz(model):
    dot_program = shutil.which("dot")
    if dot_program is None:
        pytest.skip("Graphviz's dot is not installed, so the DOT text is checked only by "
                    "its structure (the other tests of this file)")
    for function in ("f", "shifted", "doubled_until"):
        specs = ["--spec", "f64[3]"] + (["--spec", "f64[3]"] if function == "f" else [])
        dot = succeeds("graph", f"model.py::{function}", *specs, "--dot", cwd=model.parent)
        rendered = subprocess.run([dot_program, "-Tsvg"], input=dot, capture_output=True,
                                  text=True, timeout=60)
        assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
        assert "<svg" in rendered.stdout


def test_graph_svg_is_drawn_by_graphviz(model):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed, so --svg can only refuse (tested below)")
    assert succeeds("graph", "model.py::f", "--spec", "f64[3]", "--spec", "f64[3]", "--svg",
                    "f.svg", cwd=model.parent, wrote="wrote f.svg\n") == ""
    picture = (model.parent / "f.svg").read_text()
    assert picture.startswith('<?xml version="1.0" encoding="UTF-8" standalone="no"?>')
    assert "<svg" in picture and picture.rstrip().endswith("</svg>")


def test_graph_svg_without_graphviz_says_to_install_it(model, tmp_path):
    empty = tmp_path / "empty_path"
    empty.mkdir()
    environment = dict(os.environ, PATH=str(empty), PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "autotrace", "graph", "model.py::f", "--spec",
                             "f64[3]", "--spec", "f64[3]", "--svg", "f.svg"], cwd=model.parent,
                            env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "python -m autotrace graph: error: --svg needs Graphviz's dot program, which is not on "
        "PATH; install Graphviz (https://graphviz.org/download/) or write DOT with --dot\n")
    assert not (model.parent / "f.svg").exists()


def test_graph_dot_escapes_quotes_and_names_constants():
    graph = autotrace.function(lambda x: x - np.array([1.0, 2.0])).graph(np.ones(2))
    dot = graph_dot(graph, name='say "hi"\\')
    assert dot.startswith('digraph "say \\"hi\\"\\\\" {\n')
    nodes, edges = _statements(dot)
    assert list(nodes.values()) == [r"x\nf64[2]", "const0: f64[2]",
                                    r"subtract\nb: f64[2]", r"out 0\nf64[2]"]
    assert ("n1", "n2") in edges



def difference_in_a_scope(x, b):
    with autotrace.name_scope("layer"):
        y = x - b
        if np.sum(y) > 0:
            autotrace.print("positive", y)
            y = y * b
        return np.sum(y ** 2)


def test_every_dot_edge_joins_declared_nodes_and_no_check_dangles():
    """Rows of unknown size meeting in an op get a `same_sizes` check, which has no results:
    a dotted edge joins it (and a print) to the equation that follows it."""
    specs = [Spec((None, 3)), Spec((None, 3))]
    pictures = []
    for function in (difference_in_a_scope, autotrace.grad(difference_in_a_scope, wrt=(0, 1)),
                     lambda p, t: np.mean((p - t) ** 2)):
        traced = autotrace.function(function, input_signature=specs)
        for optimized in (True, False):
            pictures.append(graph_dot(traced.get_concrete_function().graph if optimized else
                                      traced.graph(np.ones((2, 3)), np.ones((2, 3)),
                                                   optimized=False)))
    for dot in pictures:
        nodes, edges = _statements(dot)
        assert edges and all(source in nodes and target in nodes for source, target in edges)
        checks = [node for node, label in nodes.items()
                  if label.startswith(("same_sizes[", "print["))]
        assert checks
        for check in checks:
            assert re.search(rf"^\s*{check} -> n\d+ \[style=dotted\];$", dot, re.MULTILINE), dot
    # the check of `p - t` points at the subtraction it guards
    nodes, edges = _statements(pictures[-1])
    check, = [node for node, label in nodes.items() if label.startswith("same_sizes[")]
    follows, = [target for source, target in edges if source == check]
    assert nodes[follows] == r"subtract\nc: f64[?,3]"


# --- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("arguments, message", [
    (["grad", "missing.py::f"], "python -m autotrace grad: error: no such file: missing.py"),
    (["grad", "model.py::g"], "python -m autotrace grad: error: model.py has no function 'g'; "
                              "its functions are f, shifted, doubled_until"),
    (["graph", "model.py::limit"], "python -m autotrace graph: error: 'limit' in model.py is "
                                   "a int, not a function"),
    (["grad", "model.py"], "python -m autotrace grad: error: 'model.py' names no function: "
                           "expected FILE.py::FUNCTION, like model.py::loss"),
    (["graph", "model.py::f", "--spec", "f64[3", "--spec", "f64[3]"],
     "python -m autotrace graph: error: --spec 'f64[3' is not an array type: expected a dtype "
     "and a shape like f64[3,4], i32[] or f64[?,3] (? for any size)"),
    (["graph", "model.py::f", "--spec", "f64[3]"],
     "python -m autotrace graph: error: f(x, y) takes 2 array arguments without a default: "
     "give one --spec for each, in order (1 given)"),
    (["graph", "model.py::shifted", "--spec", "f64[3]", "--spec", "f64[3]"],
     "python -m autotrace graph: error: shifted(x) takes at most 1 positional argument, but 2 "
     "--spec were given"),
    (["grad", "model.py::f", "--wrt", "z"],
     "python -m autotrace grad: error: --wrt: wrt='z' is not a parameter of f; its parameters "
     "are ('x', 'y')"),
])
def test_mistakes_are_one_line_with_exit_status_2(model, arguments, message):
    result = run_command(*arguments, cwd=model.parent)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == message + "\n"


def test_a_traced_function_in_the_file_and_a_construct_autotrace_refuses(tmp_path):
    path = tmp_path / "more.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np
        import autotrace


        @autotrace.function
        def scaled(x):
            return 2.0 * np.tanh(x)


        def generator(x):
            yield x
        """))
    assert succeeds("grad", "more.py::scaled", cwd=tmp_path) == textwrap.dedent("""\
        def dscaled(x, *, dy=None):
            # Primal sweep
            _t1 = np.tanh(x)
            # Adjoint sweep
            # Grad of line 7: return 2.0 * np.tanh(x)
            bx = seed(2.0 * _t1, dy) * 2.0 * (1.0 - _t1 * _t1)
            return match(bx, x)
        """)
    assert succeeds("graph", "more.py::scaled", "--spec", "f64[2]", "--raw",
                    cwd=tmp_path) == textwrap.dedent("""\
        { lambda x:f64[2] ;
          b:f64[2] = tanh x
          c:f64[2] = multiply 2.0 b
          in (c) }
        """)
    refused = run_command("grad", "more.py::generator", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == (
        f'python -m autotrace grad: File "{path}", line 11: autotrace cannot differentiate '
        f"yield (generators cannot be differentiated; return a list)\n")


# --- Spec.parse -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, shape, dtype", [
    ("f64[3,4]", (3, 4), np.float64), ("i32[]", (), np.int32), ("bool[5]", (5,), np.bool_),
    ("f64[?,3]", (None, 3), np.float64), ("c128[1, 2]", (1, 2), np.complex128),
    ("float32[2]", (2,), np.float32), ("u8[0]", (0,), np.uint8),
])
def test_spec_parse_reads_types_as_graphs_print_them(text, shape, dtype):
    assert Spec.parse(text) == Spec(shape, dtype)


@pytest.mark.parametrize("text", ["f64", "f64[3", "f7[2]", "f64[a]", "f64[3,]", "[3]",
                                  "object[2]", "f64[-1]"])
def test_spec_parse_refuses_what_is_not_an_array_type(text):
    with pytest.raises(ValueError) as caught:
        Spec.parse(text)
    assert str(caught.value) == (f"{text!r} is not an array type: expected a dtype and a shape "
                                 f"like f64[3,4], i32[] or f64[?,3] (? for any size)")


def test_graph_tensorboard_writes_the_graph_into_an_event_file(model):
    from autotrace.summary import read_events

    result = run_command("graph", "model.py::shifted", "--spec", "f64[?]", "--tensorboard",
                         "logs", cwd=model.parent)
    (events,) = (model.parent / "logs").glob("events.out.tfevents.*")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "", f"wrote {Path('logs') / events.name}\n")
    first, event = read_events(events)
    assert [(node["name"], node["op"]) for node in event["graph_def"]] == [
        ("x", "Placeholder"), ("reduce_sum", "reduce_sum"), ("Const", "Const"),
        ("greater", "greater"), ("cond/true/a", "Placeholder"), ("cond/true/Const", "Const"),
        ("cond/true/multiply", "multiply"), ("cond/true/output_0", "Identity"),
        ("cond/false/a", "Placeholder"), ("cond/false/negative", "negative"),
        ("cond/false/output_0", "Identity"), ("cond", "cond"), ("const0", "Const"),
        ("subtract", "subtract"), ("output_0", "Identity")]
    assert event["graph_def"][0]["attr"]["shape"] == (None,)
    result = run_command("graph", "model.py::f", "--spec", "f64[3]", "--spec", "f64[3]",
                         "--tensorboard", "logs", "--raw", cwd=model.parent)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "python -m autotrace graph: error: --tensorboard writes the optimized graph; "
               "leave out --raw\n")


def test_specs_an_op_refuses_are_one_line_naming_the_users_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "product.py").write_text(textwrap.dedent("""\
        import numpy as np


        def predict(w, x):
            hidden = np.tanh(x)
            return hidden @ w
        """))
    result = run_command("graph", "product.py::predict", "--spec", "f64[3,2]", "--spec",
                         "f64[5,4]", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "python -m autotrace graph: error: product.py, line 6 (return hidden @ w): "
               "matmul: shapes (5, 4) and (3, 2) do not match in their core dimension "
               "(4 != 3); the types given were --spec f64[3,2] --spec f64[5,4]\n")
    # the same function with types that fit traces
    status, printed, errors = run_main("graph", "product.py::predict", "--spec", "f64[4,2]",
                                       "--spec", "f64[5,4]", cwd=tmp_path,
                                       monkeypatch=monkeypatch, capsys=capsys)
    assert (status, errors) == (0, "") and "f64[5,2] = matmul" in printed


@pytest.mark.parametrize("files, message", [
    ({"broken.py": "import numpy as np\n\ndef f(x):\n    return x +\n"},
     "broken.py, line 4: SyntaxError: invalid syntax"),
    ({"broken.py": "def f(x):\n    if x:\n    return x\n"},
     "broken.py, line 3: IndentationError: expected an indented block after 'if' statement "
     "on line 2"),
    ({"broken.py": "import numpy as np\nimport no_such_module_here\n\ndef f(x):\n"
                   "    return x\n"},
     "broken.py, line 2: ModuleNotFoundError: No module named 'no_such_module_here'"),
    ({"broken.py": "from neighbour import g\n\ndef f(x):\n    return g(x)\n",
      "neighbour.py": "import numpy as np\nfrom numpy import no_such_name\n\n"
                      "def g(x):\n    return x\n"},
     "neighbour.py, line 2: ImportError: cannot import name 'no_such_name' from 'numpy' "
     f"({Path(np.__file__)})"),
    ({"broken.py": "from neighbour import g\n\ndef f(x):\n    return g(x)\n",
      "neighbour.py": "def g(x):\n    return x +* 2\n"},
     "neighbour.py, line 2: SyntaxError: invalid syntax"),
])
def test_a_file_that_does_not_parse_or_import_is_one_line_with_exit_status_2(
        tmp_path, files, message, monkeypatch, capsys):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert run_main("grad", "broken.py::f", cwd=tmp_path, monkeypatch=monkeypatch,
                    capsys=capsys) == (2, "", f"python -m autotrace grad: error: {message}\n")
    assert "broken" not in sys.modules and "neighbour" not in sys.modules


METHODS = """\
import numpy as np


class Model:
    scale = 3.0

    def loss(self, x):
        return self.scale * np.sum(x ** 2)

    @staticmethod
    def smooth(x):
        return np.sum(np.sin(x))

    @classmethod
    def scaled(cls, x):
        return cls.scale * np.sum(x)
"""


def test_a_method_of_a_class_is_named_class_dot_method(tmp_path, monkeypatch, capsys):
    (tmp_path / "methods.py").write_text(METHODS)

    def succeeds(*arguments, cwd):
        status, printed, errors = run_main(*arguments, cwd=cwd, monkeypatch=monkeypatch,
                                           capsys=capsys)
        assert (status, errors) == (0, "")
        return printed
    # a method for instances: d/dx, the parameter after self, by default
    assert succeeds("grad", "methods.py::Model.loss", cwd=tmp_path) == textwrap.dedent("""\
        def dloss(self, x, *, dy=None):
            # Primal sweep
            _t1 = self.scale
            _t2 = x ** 2
            _t3 = np.sum(_t2)
            # Adjoint sweep
            # Grad of line 8: return self.scale * np.sum(x ** 2)
            b_t4 = seed(_t1 * _t3, dy)
            b_t3 = sum_copies(b_t4, _t3) if repeats(_t1, _t3) else unbroadcast(b_t4 * _t1, _t3)
            bx = unreduce(b_t3, _t2, None, False) * 2 * x
            return match(bx, x)
        """)
    # a class method, bound to its class: d/dx too
    assert succeeds("grad", "methods.py::Model.scaled", cwd=tmp_path) == textwrap.dedent("""\
        def dscaled(cls, x, *, dy=None):
            # Primal sweep
            _t1 = cls.scale
            _t2 = np.sum(x)
            # Adjoint sweep
            # Grad of line 16: return cls.scale * np.sum(x)
            b_t3 = seed(_t1 * _t2, dy)
            b_t2 = sum_copies(b_t3, _t2) if repeats(_t1, _t2) else unbroadcast(b_t3 * _t1, _t2)
            bx = unreduce(b_t2, x, None, False)
            return match(bx, x)
        """)
    # The code printed is grad's, which computes the right thing: 3 * 2x and 3.
    loss = cli.load_function(f"{tmp_path / 'methods.py'}::Model.loss").function
    model, x = sys.modules[loss.__module__].Model, np.array([0.5, -2.0])
    np.testing.assert_allclose(autotrace.grad(model.loss, wrt="x")(model(), x), 6.0 * x,
                               rtol=1e-15)
    np.testing.assert_allclose(autotrace.grad(model.scaled)(x), [3.0, 3.0], rtol=1e-15)
    # a static method traces as a function; a class method with its class bound
    assert succeeds("graph", "methods.py::Model.smooth", "--spec", "f64[2]",
                    cwd=tmp_path) == textwrap.dedent("""\
        { lambda x:f64[2] ;
          b:f64[2] = sin x
          c:f64[] = reduce_sum[axis=(0,)] b
          in (c) }
        """)
    assert succeeds("graph", "methods.py::Model.scaled", "--spec", "f64[2]",
                    cwd=tmp_path) == textwrap.dedent("""\
        { lambda x:f64[2] ;
          b:f64[] = reduce_sum[axis=(0,)] x
          c:f64[] = multiply 3.0 b
          in (c) }
        """)


@pytest.mark.parametrize("arguments, message", [
    (["graph", "methods.py::Model.loss", "--spec", "f64[2]"],
     "Model.loss takes an instance first (self), which --spec cannot give; graph traces "
     "functions, static methods and class methods: trace a function that makes the instance "
     "and calls the method"),
    (["grad", "methods.py::Model.fit"], "'Model' in methods.py has no method 'fit'"),
    (["grad", "methods.py::Model.scale"], "'Model.scale' in methods.py is a float, not a "
                                          "function"),
    (["grad", "methods.py::Model"], "'Model' in methods.py is a class, not a function"),
    (["grad", "methods.py::np.sum"], "'np' in methods.py is a module, not a class: it has no "
                                     "methods"),
])
def test_methods_mistakes_are_one_line_with_exit_status_2(tmp_path, arguments, message,
                                                         monkeypatch, capsys):
    (tmp_path / "methods.py").write_text(METHODS)
    assert run_main(*arguments, cwd=tmp_path, monkeypatch=monkeypatch, capsys=capsys) == (
        2, "", f"python -m autotrace {arguments[0]}: error: {message}\n")


def test_version_is_the_packages():
    result = run_command("--version", cwd=ROOT)
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"autotrace {autotrace.__version__}\n", "")
