"""The training examples run, and reach what their docstrings say."""
import re
import runpy
from pathlib import Path

import numpy as np
import pytest

import autotrace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name), run_name="example")


def test_linear_regression_reaches_w_3_b_2_with_one_trace(capsys):
    model = load("linear_regression.py")["main"]()
    assert abs(float(model.W) - 3.0) < 0.2 and abs(float(model.B) - 2.0) < 0.2
    printed = capsys.readouterr().out
    assert "Loss at step 200" in printed and "(traced 1 time)" in printed


def test_mnist_cnn_reaches_95_percent_writes_summaries_and_graph_and_resumes(tmp_path, capsys):
    pytest.importorskip("sklearn", reason="the digits data set comes with scikit-learn")
    from autotrace.summary import read_events
    main = load("mnist_cnn.py")["main"]
    # A quarter as wide as the guide's model (a quarter of the filters and units), with a
    # larger step: the same layers, summaries, graph and checkpoints, in half the time.
    smaller = ["--width", "0.25", "--learning-rate", "3e-3"]
    accuracy = main(["--logdir", str(tmp_path), "--epochs", "8"] + smaller)
    assert accuracy >= 0.95
    printed = capsys.readouterr().out
    assert "train_step traced 1 time(s)" in printed and "Resumed" not in printed
    assert (tmp_path / "ckpt-8.npz").exists() and (tmp_path / "ckpt-8.index.json").exists()
    (events,) = tmp_path.glob("events.out.tfevents.*")
    accuracies = [value["simple_value"] for event in read_events(events)
                  for value in event.get("summary", []) if value["tag"] == "test/accuracy"]
    assert len(accuracies) == 8 and abs(accuracies[-1] - accuracy) < 1e-6
    (graph,) = [event["graph_def"] for event in read_events(events) if "graph_def" in event]
    # Layers are named in the order they are made in the process (conv2d, conv2d_1, ...):
    # other tests make layers too, so the numbers are left out, and the names must differ.
    names = [node["name"] for node in graph if node["op"] in ("conv2d", "matmul")]
    assert [re.sub(r"_\d+(?=/)", "", name) for name in names] == [
        "conv_net/conv2d/conv2d", "conv_net/conv2d/conv2d", "conv_net/dense/matmul",
        "conv_net/dense/matmul"]
    assert len(set(names)) == 4

    # Run again with the same directory: it resumes after epoch 8 and trains one more.
    resumed = main(["--logdir", str(tmp_path), "--epochs", "9"] + smaller)
    printed = capsys.readouterr().out
    assert f"Resumed from {tmp_path}/ckpt-8 after epoch 8" in printed
    assert "epoch 9:" in printed and "epoch 8:" not in printed
    assert resumed >= 0.95 and (tmp_path / "ckpt-9.npz").exists()

    # And again: 9 epochs are done, so it trains none, and evaluates the checkpoint's model.
    again = main(["--logdir", str(tmp_path), "--epochs", "9"] + smaller)
    printed = capsys.readouterr().out
    assert printed.splitlines()[1:] == [
        "Already trained for 9 epochs, --epochs 9: nothing to train (give a larger --epochs to "
        "train more); evaluating the checkpoint",
        f"train_step traced 0 time(s); test accuracy {resumed:.2%}"]
    assert again == resumed and not (tmp_path / "ckpt-10.npz").exists()


def test_csv_pipeline_reads_every_row_each_epoch_and_fits_the_plane(tmp_path, capsys):
    W, B = load("csv_pipeline.py")["main"]([str(tmp_path)])
    assert np.allclose(W, [3.0, -2.0], atol=0.05) and abs(B - 1.0) < 0.05
    printed = capsys.readouterr().out
    assert printed.count("20 batches") == 5      # 4 files of 250 rows, batches of 50
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"points-{i}.csv" for i in range(4)]


def test_export_convnet_runs_the_exported_modules_without_autotrace(tmp_path, capsys):
    final_loss = load("export_convnet.py")["main"](["--folder", str(tmp_path), "--steps", "3"])
    printed = capsys.readouterr().out
    assert "without autotrace: same losses True, same predictions True" in printed
    assert 0.5 < final_loss < 2.4  # log(10) = 2.30 at the start
    assert {"train_step.py", "train_step.npz", "predict.py", "predict.npz"} <= {
        path.name for path in tmp_path.iterdir()}


def test_scoped_gradients_puts_the_backward_operations_under_gradients(tmp_path, capsys):
    picture = tmp_path / "picture.dot"
    counts = load("scoped_gradients.py")["main"]([str(picture)])
    # The forward operations in the scopes as written (the loss's mean is not needed by its
    # gradient); each scope's backward operations under gradients/; the gradient of the
    # `first, second = weights` unpacking outside every scope; the hidden layer's gradient of
    # 32 x 8 values is one fused kernel (tanh's derivative, three operations), a transpose and
    # a matmul.
    assert counts == {"model/hidden": 2, "model/output": 1, "loss": 1, "gradients/loss": 1,
                      "gradients/model/output": 4, "gradients/model/hidden": 3,
                      "(no scope)": 2}
    assert f"Wrote {picture}" in capsys.readouterr().out
    labels = [line.strip() for line in picture.read_text().splitlines()
              if line.strip().startswith("label=\"")]
    assert labels == ['label="model";', 'label="hidden";', 'label="output";', 'label="loss";',
                      'label="gradients";', 'label="loss";', 'label="model";',
                      'label="output";', 'label="hidden";']


def test_checkpointing_stores_less_and_agrees(capsys):
    result = load("checkpointing.py")["main"](["--steps", "200", "--every", "14"])
    assert result["agree"] and result["checkpointed"] * 3 < result["stored"]
    printed = capsys.readouterr().out
    assert "# checkpoint: cell's primal sweep runs again here" in printed
    assert "with checkpoint_every=14" in printed and "gradients agree: True" in printed


def test_library_model_is_differentiated_as_written(capsys):
    result = load("library_model.py")["main"]()
    np.testing.assert_allclose(result["eager"], result["by_hand"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(result["traced"], result["by_hand"], rtol=1e-10, atol=1e-12)
    assert result["once"]
    np.testing.assert_allclose(result["of_weights"], result["weights_by_hand"], rtol=1e-12,
                               atol=1e-14)
    assert "forward ran once per gradient: True" in capsys.readouterr().out


def test_per_example_gradients_clips_each_example_and_trains_privately(capsys):
    pytest.importorskip("sklearn", reason="the digits data set comes with scikit-learn")
    example = load("per_example_gradients.py")
    result = example["main"](["--epochs", "9"])
    printed = capsys.readouterr().out
    assert "Per-example gradients of 16 examples agree with a loop of autotrace.grad" in printed
    assert result["difference"] < 1e-12 and result["trace_count"] == 1
    assert printed.count("training loss") == 3 and result["test_accuracy"] >= 0.9

    # The private gradient, against one computed by hand from a loop of grad: each example's
    # gradient scaled to norm at most C, summed, the noise times sigma * C added, averaged.
    images, labels = example["load_digits"]()[:2]
    images, labels = images[:8], labels[:8]
    rng = np.random.default_rng(1)
    parameters = example["initial_parameters"](rng)
    noise = tuple(rng.standard_normal(np.shape(p)) for p in parameters)
    clip, sigma = 4.0, 0.7
    looped = [autotrace.grad(example["loss"])(parameters, image, label)
              for image, label in zip(images, labels)]
    norms = [np.sqrt(sum(np.sum(g ** 2) for g in gradient)) for gradient in looped]
    assert min(norms) < clip < max(norms)  # some examples are clipped, some are not
    expected = [(sum(gradient[k] * min(1.0, clip / norm) for gradient, norm in zip(looped, norms))
                 + sigma * clip * noise[k]) / len(images) for k in range(len(parameters))]
    step = autotrace.function(example["private_gradient"])
    for got, want in zip(step(parameters, images, labels, noise, clip, sigma), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
