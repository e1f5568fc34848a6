"""The source passes as one ordered list (transforms/pipeline.py SOURCE_PASSES), printing the
source after a named pass, and wrt resolved once (transforms/wrt.py)."""
import numpy as np
import pytest

from autotrace.transforms.pipeline import SOURCE_PASSES, forward_function, reverse_function
from autotrace.transforms.derivative_record import derivative_record
from autotrace.transforms.session import Session
from autotrace.transforms.wrt import WithRespectTo


def loss(x, w):
    y = np.sin(x) * w
    return np.sum(y)


def names(mode):
    return [p.name for p in SOURCE_PASSES if mode in p.modes]


def test_each_mode_runs_the_front_end_then_its_own_passes_then_loads():
    reverse, forward = names("reverse"), names("forward")
    assert reverse[0] == forward[0] == "parse"
    assert reverse[-2:] == forward[-2:] == ["generated", "load"]
    assert reverse.index("anf") < reverse.index("exits") < reverse.index("activity") \
        < reverse.index("reverse") < reverse.index("saves") < reverse.index("dead_code")
    assert "exits" not in forward and "reverse" not in forward
    assert forward.index("activity") < forward.index("forward") < forward.index("dead_code")
    assert "forward" not in reverse


def test_show_after_prints_the_source_after_the_named_pass(capsys):
    reverse_function(loss, WithRespectTo.of(0), session=Session(optimized=True, outermost=True,
                                              show_after=("anf", "generated")))
    printed = capsys.readouterr().out
    assert "# ---- after anf ----" in printed
    assert "_t1 = np.sin(x)" in printed  # the A-normal form, before reverse mode
    assert "def dloss(x, w, *, dy=None):" in printed  # the generated function
    assert "after dead_code" not in printed


def test_autotrace_debug_generated_prints_each_generated_function(monkeypatch, capsys):
    monkeypatch.setenv("AUTOTRACE_DEBUG", "generated")
    derivative = forward_function(loss, WithRespectTo.of(1),
                                  session=Session(optimized=True, outermost=True))
    printed = capsys.readouterr().out
    assert printed == derivative_record(derivative).source + "\n"


def test_wrt_is_resolved_once_into_names_and_positions():
    resolved = WithRespectTo.of((1, "x")).resolve(["x", "w"], "loss")
    assert (resolved.names, resolved.positions, resolved.single) == (("w", "x"), (1, 0), False)
    assert WithRespectTo.of(-1).resolve(["x", "w"], "loss").single
    with pytest.raises(ValueError, match=r"wrt=2 is out of range: loss has 2 parameters"):
        WithRespectTo.of(2).resolve(["x", "w"], "loss")


def test_wrt_of_the_wrong_type_is_refused_where_it_is_given():
    with pytest.raises(TypeError, match=r"wrt must be a parameter index or name, or a tuple "
                                        r"of those; got 1\.5"):
        WithRespectTo.of((0, 1.5))
    given = WithRespectTo.of((0, "b"))
    assert WithRespectTo.of(given) is given  # (made once, handed on as it is)


def test_past_self_moves_positions_from_the_front_past_a_bound_methods_object():
    assert WithRespectTo.of(0).past_self() == WithRespectTo.of(1)
    # names and positions from the end stay
    assert WithRespectTo.of((0, "b", -1)).past_self().given == (1, "b", -1)
