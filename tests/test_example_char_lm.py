"""examples/char_lm.py: it trains, checkpoints, resumes where it stopped, writes summaries and
samples; and the gradient its training step takes is the loss's."""
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import autotrace

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "char_lm.py"
# A smaller model than the example's, on shorter windows: the same layers, optimizer,
# checkpoints and summaries in a few seconds.
SMALL = ["--width", "32", "--heads", "2", "--depth", "1", "--context", "32", "--batch-size",
         "16", "--learning-rate", "1e-2", "--warmup-steps", "5", "--log-every", "5",
         "--checkpoint-every", "10", "--sample-length", "40"]


def load() -> dict:
    return runpy.run_path(str(EXAMPLE), run_name="example")


def scalars(logdir: Path, tag: str) -> list:
    from autotrace.summary import read_events
    return [(event["step"], value["simple_value"])
            for path in sorted(logdir.glob("events.out.tfevents.*"))
            for event in read_events(path)
            for value in event.get("summary", []) if value["tag"] == tag]


def test_char_lm_trains_checkpoints_resumes_and_samples(tmp_path, capsys, monkeypatch):
    main = load()["main"]
    result = main(["--logdir", str(tmp_path), "--steps", "30"] + SMALL)
    printed = capsys.readouterr().out
    losses = result["losses"]
    # From about log 61 (chance among the text's characters) down by more than a nat.
    assert len(losses) == 30 and abs(losses[0] - np.log(61)) < 0.5
    assert np.mean(losses[-5:]) < losses[0] - 1.0
    assert result["validation_loss"] < losses[0] - 1.0
    assert "train_step traced 1 time(s)" in printed and "Resumed" not in printed
    assert [line for line in printed.splitlines() if "validation loss" in line][:3] == [
        f"step {step}: validation loss {value:.3f} nats/char, saved {tmp_path}/ckpt-{step}"
        for step, value in scalars(tmp_path, "validation/loss")]
    assert {f"ckpt-{step}.npz" for step in (10, 20, 30)} <= {p.name for p in tmp_path.iterdir()}
    # train/loss every 5 steps is the mean of those steps' losses
    logged = scalars(tmp_path, "train/loss")
    assert [step for step, _ in logged] == [5, 10, 15, 20, 25, 30]
    np.testing.assert_allclose([value for _, value in logged],
                               np.mean(np.reshape(losses, (6, 5)), axis=1), rtol=1e-6)
    # The rate of each logged step: up from 0 to 1e-2 in 5 steps, then a cosine down to a tenth
    # of that over the other 25 (the step the schedule reads is the number of steps before).
    expected = [1e-2 * k / 5 if k < 5 else
                1e-2 * (0.9 * 0.5 * (1 + np.cos(np.pi * (k - 5) / 25)) + 0.1)
                for k in (4, 9, 14, 19, 24, 29)]
    np.testing.assert_allclose([rate for _, rate in scalars(tmp_path, "train/learning_rate")],
                               expected, rtol=1e-6)
    # The sample continues the prompt with 40 characters of the text's alphabet.
    sample = result["sample"]
    assert sample.startswith("MENENIUS:\n") and len(sample) == len("MENENIUS:\n") + 40
    assert f"Sampled at temperature 0.8:\n{sample}" in printed

    # Take the checkpoint of step 30 away: the run resumes from step 20 and takes the same
    # steps 21 to 30 as before (the same batches, learning rates and optimizer state). This
    # time without tqdm: it says how to get it, and prints the loss every 5 steps.
    for path in tmp_path.glob("ckpt-30.*"):
        path.unlink()
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `import tqdm` raises ImportError
    resumed = main(["--logdir", str(tmp_path), "--steps", "30"] + SMALL)
    printed = capsys.readouterr().out
    np.testing.assert_allclose(resumed["losses"], losses[20:], rtol=1e-9)
    assert printed.splitlines()[:5] == [
        f"Resumed from {tmp_path}/ckpt-20 after step 20",
        "For a progress bar install tqdm (pip install tqdm, or pip install -e "
        "'.[examples]'); printing the loss every --log-every steps instead",
        f"step 25: loss {np.mean(losses[20:25]):.3f}",
        f"step 30: loss {np.mean(losses[25:]):.3f}",
        f"step 30: validation loss {resumed['validation_loss']:.3f} nats/char, saved "
        f"{tmp_path}/ckpt-30"]
    assert resumed["sample"] == sample

    # Everything is trained: it says so, and samples from the checkpoint.
    again = main(["--logdir", str(tmp_path), "--steps", "30"] + SMALL)
    printed = capsys.readouterr().out
    assert printed.splitlines()[:2] == [
        f"Resumed from {tmp_path}/ckpt-30 after step 30",
        "Already trained for 30 steps, --steps 30: nothing to train (give a larger --steps to "
        "train more); sampling from the checkpoint"]
    assert again["losses"] == [] and again["trace_count"] == 0
    assert again["sample"] == sample and again["validation_loss"] == resumed["validation_loss"]


def tiny_model(example: dict):
    """The example's model with a few dozen parameters, built, and a batch for it."""
    autotrace.random.set_seed(3)
    model = example["CharTransformer"](vocabulary=5, context=4, width=4, heads=2, depth=1)
    rng = np.random.default_rng(0)
    tokens, targets = rng.integers(0, 5, size=(2, 4)), rng.integers(0, 5, size=(2, 4))
    model(tokens)
    # Nonzero biases and normalization offsets, so that their gradients are tested too.
    for variable in model.trainable_variables:
        variable.assign(variable.numpy() + 0.3 * rng.standard_normal(variable.shape))
    return model, tokens, targets


def test_char_lm_training_step_gradient_matches_finite_differences():
    example = load()
    model, tokens, targets = tiny_model(example)
    loss = example["loss"]
    gradients = autotrace.implicit_value_and_grad(loss)
    value, eager = gradients(model, tokens, targets)
    _, traced = autotrace.function(lambda t, y: gradients(model, t, y))(tokens, targets)
    variables = model.trainable_variables
    # 2 embeddings, 3 normalizations, attention (4 kernels, 4 biases), 2 Dense layers, logits
    assert len(eager) == len(variables) == 22
    assert [v.name for _, v in eager] == [v.name for v in variables]
    for (eager_gradient, _), (traced_gradient, _) in zip(eager, traced):
        np.testing.assert_allclose(traced_gradient, eager_gradient, rtol=1e-10, atol=1e-13)

    # Central differences along random directions in all the parameters at once.
    rng = np.random.default_rng(1)
    start = [v.numpy().copy() for v in variables]
    for _ in range(3):
        direction = [rng.standard_normal(v.shape) for v in variables]
        shifted = []
        for sign in (1.0, -1.0):
            for variable, value0, d in zip(variables, start, direction):
                variable.assign(value0 + sign * 1e-5 * d)
            shifted.append(float(loss(model, tokens, targets)))
        for variable, value0 in zip(variables, start):
            variable.assign(value0)
        numeric = (shifted[0] - shifted[1]) / 2e-5
        analytic = sum(float(np.sum(g * d)) for (g, _), d in zip(eager, direction))
        assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic)), (numeric, analytic)
    assert abs(float(value) - float(loss(model, tokens, targets))) < 1e-12


def test_char_lm_samples_through_a_padded_window_as_through_the_text_alone():
    # The sampler pads a short text on the right to the model's context; the causal mask must
    # keep the padding from changing the logits at the text's positions.
    example = load()
    model, tokens, _ = tiny_model(example)
    padded = tokens.copy()
    padded[:, 2:] = 0
    np.testing.assert_allclose(np.asarray(model(padded))[:, :2],
                               np.asarray(model(tokens[:, :2])), rtol=1e-12, atol=1e-12)


def test_char_lm_refuses_arguments_it_cannot_train_with(capsys):
    main = load()["main"]
    for arguments, message in (
            (["--steps", "0"], "--steps must be at least 1, got 0"),
            (["--width", "30", "--heads", "4"], "--width (30) must be a multiple of --heads (4): "
                                                "each head gets width / heads of it")):
        with pytest.raises(SystemExit):
            main(arguments)
        assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {message}")
