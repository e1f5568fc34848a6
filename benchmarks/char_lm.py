"""The training step of examples/char_lm.py's transformer in autotrace, JAX and PyTorch.

    python benchmarks/char_lm.py                 # the example's shapes
    python benchmarks/char_lm.py --one-core      # the whole process on one core

One model (the example's: character and position embeddings, 2 pre-norm blocks of causal
4-head attention and a GELU MLP, width 64, 61 characters), one batch shape (32 windows of 64
characters) and one step: the mean cross entropy and its gradient, the gradient clipped to a
global norm of 1, AdamW (weight decay 0.01, none on biases, embeddings and normalization) at
the example's warmup-and-cosine learning rate. autotrace runs it traced (`autotrace.function`),
JAX as one `jax.jit` of the whole step, PyTorch eagerly and, where it compiles here, with the
loss under `torch.compile`. All in float64: autotrace's Dense and Embedding layers make
float64 weights.

Before timing, each framework starts from autotrace's initial weights and must agree with it
on the loss and the gradient of the first batch (to 1e-9 relative) and on the losses of the
next steps (to 1e-6: PyTorch clips to a norm of 1 a little differently); one that does not is
reported and left out. Times are per step, the best of --repeat runs, the frameworks taking
turns so that load from elsewhere slows all alike; then autotrace's time over each (2.0x:
autotrace takes twice as long). Every library runs as installed: BLAS on the threads
OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS, MKL_NUM_THREADS) gives it, every core where they are
unset; autotrace's fused kernels, PyTorch's and XLA's loops on every core the process may use.
`--one-core` puts the whole process on one core, BLAS and every library's loops on one thread.
"""
from __future__ import annotations

import os
import sys

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if "--one-core" in sys.argv[1:]:
    for _variable in THREAD_VARIABLES:
        os.environ[_variable] = "1"  # before NumPy loads its BLAS
_THREADS_AS_GIVEN = {variable: os.environ.get(variable) for variable in THREAD_VARIABLES}

import argparse  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import runpy  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy  # noqa: E402

import autotrace  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traced_speed import best_times_in_turns, first_line  # noqa: E402

# traced_speed pins BLAS to one thread for its own runs by setting these variables when it is
# imported; NumPy's BLAS has read them already, and what is printed must be what it read.
for _variable, _value in _THREADS_AS_GIVEN.items():
    if _value is None:
        os.environ.pop(_variable, None)
    else:
        os.environ[_variable] = _value
# (examples/char_lm.py, run below, sets them too, after NumPy has read them)
BLAS_THREADS = os.environ.get("OPENBLAS_NUM_THREADS", "as installed (every core)")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "char_lm.py"
BATCH, CONTEXT, WIDTH, HEADS, DEPTH = 32, 64, 64, 4, 2
PEAK_RATE, WARMUP, STEPS, WEIGHT_DECAY, CLIP_NORM = 3e-3, 50, 600, 0.01, 1.0
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-7
LAYER_NORM_EPSILON, MASKED_SCORE = 1e-3, -1e9  # Keras's LayerNormalization; autotrace's mask
GRADIENT_RTOL, STEPPED_RTOL, CHECKED_STEPS = 1e-9, 1e-6, 4


def learning_rate(step, np_like=numpy):
    """The example's schedule at `step` (an int, or a traced JAX integer with jax.numpy):
    linear warmup from 0 over WARMUP steps, then a cosine down to a tenth of the peak."""
    progress = np_like.minimum(step - WARMUP, STEPS - WARMUP) / (STEPS - WARMUP)
    decayed = PEAK_RATE * (0.9 * 0.5 * (1 + np_like.cos(math.pi * progress)) + 0.1)
    return np_like.where(step < WARMUP, PEAK_RATE * step / WARMUP, decayed)


def decays(name: str) -> bool:
    return not any(part in name for part in ("bias", "gamma", "beta", "embeddings"))


# --- autotrace: the example's own model and step ---------------------------------------------

def autotrace_model_and_step(example: dict, tokens):
    """The example's model, built, and its traced step (which returns the loss before it)."""
    autotrace.random.set_seed(0)
    model = example["CharTransformer"](61, CONTEXT, WIDTH, HEADS, DEPTH)
    model(tokens)  # builds the weights
    schedule = autotrace.optimizers.schedules.CosineDecay(
        0.0, decay_steps=STEPS - WARMUP, alpha=0.1, warmup_target=PEAK_RATE,
        warmup_steps=WARMUP)
    optimizer = autotrace.optimizers.AdamW(learning_rate=schedule, weight_decay=WEIGHT_DECAY,
                                           global_clipnorm=CLIP_NORM, epsilon=EPSILON)
    optimizer.exclude_from_weight_decay(var_names=["bias", "gamma", "beta", "embeddings"])
    gradients = autotrace.implicit_value_and_grad(example["loss"])

    @autotrace.function
    def step(tokens, targets):
        value, grads_and_vars = gradients(model, tokens, targets)
        optimizer.apply_gradients(grads_and_vars)
        return value

    return model, step


def short_names(model) -> dict:
    """{Variable name: short name}, short names as `blocks.0.attention.query_kernel`."""
    layers = {"characters": model.characters, "positions": model.positions,
              "final_norm": model.final_norm, "logits": model.logits}
    for i, block in enumerate(model.blocks):
        for part in ("attention_norm", "attention", "mlp_norm", "expand", "project"):
            layers[f"blocks.{i}.{part}"] = getattr(block, part)
    return {variable.name: f"{key}.{variable.name.rsplit('/', 1)[-1]}"
            for key, layer in layers.items() for variable in layer.trainable_variables}


# --- the same model, written for JAX and for PyTorch -------------------------------------------

def jax_loss(jax, jnp, weights: dict, tokens, targets):
    def layer_norm(x, name):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        variance = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        normed = (x - mean) / jnp.sqrt(variance + LAYER_NORM_EPSILON)
        return normed * weights[f"{name}.gamma"] + weights[f"{name}.beta"]

    def dense(x, name):
        return x @ weights[f"{name}.kernel"] + weights[f"{name}.bias"]

    def attention(x, name):
        batch, length, width = x.shape
        size = width // HEADS

        def heads(part):
            kernel = jnp.reshape(weights[f"{name}.{part}_kernel"], (width, HEADS * size))
            projected = jnp.reshape(x @ kernel, (batch, length, HEADS, size))
            return jnp.transpose(projected + weights[f"{name}.{part}_bias"], (0, 2, 1, 3))

        query, key, value = heads("query"), heads("key"), heads("value")
        scores = query @ jnp.swapaxes(key, 2, 3) / math.sqrt(size)
        causal = jnp.tril(jnp.ones((length, length), dtype=bool))
        attended = jax.nn.softmax(jnp.where(causal, scores, MASKED_SCORE), axis=-1) @ value
        attended = jnp.reshape(jnp.transpose(attended, (0, 2, 1, 3)), (batch, length, width))
        output = jnp.reshape(weights[f"{name}.output_kernel"], (HEADS * size, width))
        return attended @ output + weights[f"{name}.output_bias"]

    x = weights["characters.embeddings"][tokens] + weights["positions.embeddings"][
        :tokens.shape[1]]
    for i in range(DEPTH):
        x = x + attention(layer_norm(x, f"blocks.{i}.attention_norm"), f"blocks.{i}.attention")
        expanded = jax.nn.gelu(dense(layer_norm(x, f"blocks.{i}.mlp_norm"),
                                     f"blocks.{i}.expand"), approximate=True)
        x = x + dense(expanded, f"blocks.{i}.project")
    logits = dense(layer_norm(x, "final_norm"), "logits")
    log_probabilities = jax.nn.log_softmax(jnp.reshape(logits, (-1, logits.shape[-1])))
    picked = jnp.take_along_axis(log_probabilities, jnp.reshape(targets, (-1, 1)), axis=1)
    return -jnp.mean(picked)


def jax_trainer(jax, jnp, initial: dict):
    """(loss and gradient function, a function that takes one step and returns the loss)."""
    value_and_grad = jax.jit(jax.value_and_grad(
        lambda weights, tokens, targets: jax_loss(jax, jnp, weights, tokens, targets)))

    @jax.jit
    def step(weights, m, v, count, tokens, targets):
        value, gradients = value_and_grad(weights, tokens, targets)
        norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in gradients.values()))
        scale = CLIP_NORM / jnp.maximum(norm, CLIP_NORM)
        rate = learning_rate(count, jnp)
        count = count + 1
        corrected = rate * jnp.sqrt(1 - BETA_2 ** count) / (1 - BETA_1 ** count)
        new_weights, new_m, new_v = {}, {}, {}
        for name, weight in weights.items():
            gradient = gradients[name] * scale
            if decays(name):
                weight = weight - weight * (WEIGHT_DECAY * rate)
            new_m[name] = BETA_1 * m[name] + (1 - BETA_1) * gradient
            new_v[name] = BETA_2 * v[name] + (1 - BETA_2) * gradient ** 2
            new_weights[name] = weight - corrected * new_m[name] / (
                jnp.sqrt(new_v[name]) + EPSILON)
        return value, new_weights, new_m, new_v, count

    state = {"weights": {k: jnp.asarray(w) for k, w in initial.items()},
             "m": {k: jnp.zeros(w.shape) for k, w in initial.items()},
             "v": {k: jnp.zeros(w.shape) for k, w in initial.items()},
             "count": jnp.asarray(0)}

    def take_step(tokens, targets):
        value, state["weights"], state["m"], state["v"], state["count"] = step(
            state["weights"], state["m"], state["v"], state["count"], tokens, targets)
        return float(jax.block_until_ready(value))

    def loss_and_gradient(tokens, targets):
        value, gradients = value_and_grad(state["weights"], tokens, targets)
        return float(value), {k: numpy.asarray(g) for k, g in gradients.items()}

    return loss_and_gradient, take_step


def torch_loss(torch, weights: dict, tokens, targets):
    functional = torch.nn.functional

    def layer_norm(x, name):
        mean = x.mean(-1, keepdim=True)
        variance = ((x - mean) ** 2).mean(-1, keepdim=True)
        normed = (x - mean) / torch.sqrt(variance + LAYER_NORM_EPSILON)
        return normed * weights[f"{name}.gamma"] + weights[f"{name}.beta"]

    def dense(x, name):
        return x @ weights[f"{name}.kernel"] + weights[f"{name}.bias"]

    def attention(x, name):
        batch, length, width = x.shape
        size = width // HEADS

        def heads(part):
            kernel = weights[f"{name}.{part}_kernel"].reshape(width, HEADS * size)
            projected = (x @ kernel).reshape(batch, length, HEADS, size)
            return (projected + weights[f"{name}.{part}_bias"]).permute(0, 2, 1, 3)

        query, key, value = heads("query"), heads("key"), heads("value")
        scores = query @ key.transpose(2, 3) / math.sqrt(size)
        causal = torch.tril(torch.ones(length, length, dtype=torch.bool))
        weights_of_values = torch.softmax(torch.where(causal, scores, MASKED_SCORE), dim=-1)
        attended = (weights_of_values @ value).permute(0, 2, 1, 3).reshape(batch, length, width)
        output = weights[f"{name}.output_kernel"].reshape(HEADS * size, width)
        return attended @ output + weights[f"{name}.output_bias"]

    x = weights["characters.embeddings"][tokens] + weights["positions.embeddings"][
        :tokens.shape[1]]
    for i in range(DEPTH):
        x = x + attention(layer_norm(x, f"blocks.{i}.attention_norm"), f"blocks.{i}.attention")
        expanded = functional.gelu(dense(layer_norm(x, f"blocks.{i}.mlp_norm"),
                                         f"blocks.{i}.expand"), approximate="tanh")
        x = x + dense(expanded, f"blocks.{i}.project")
    logits = dense(layer_norm(x, "final_norm"), "logits")
    return functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def torch_trainer(torch, initial: dict, compiled: bool):
    """(loss and gradient function, a function that takes one step and returns the loss)."""
    weights = {k: torch.tensor(w, requires_grad=True) for k, w in initial.items()}
    optimizer = torch.optim.AdamW(
        [{"params": [w for k, w in weights.items() if decays(k)], "weight_decay": WEIGHT_DECAY},
         {"params": [w for k, w in weights.items() if not decays(k)], "weight_decay": 0.0}],
        lr=0.0, betas=(BETA_1, BETA_2), eps=EPSILON)
    loss = (torch.compile(lambda w, t, y: torch_loss(torch, w, t, y)) if compiled else
            (lambda w, t, y: torch_loss(torch, w, t, y)))
    count = [0]

    def take_step(tokens, targets):
        count[0] += 1
        for group in optimizer.param_groups:
            group["lr"] = float(learning_rate(count[0] - 1))
            # PyTorch adds epsilon to sqrt(v) after dividing it by sqrt(1 - beta_2 ** t),
            # Keras (and autotrace) before: this epsilon makes the two the same.
            group["eps"] = EPSILON / math.sqrt(1 - BETA_2 ** count[0])
        optimizer.zero_grad(set_to_none=True)
        value = loss(weights, tokens, targets)
        value.backward()
        torch.nn.utils.clip_grad_norm_(list(weights.values()), CLIP_NORM)
        optimizer.step()
        return float(value.detach())

    def loss_and_gradient(tokens, targets):
        optimizer.zero_grad(set_to_none=True)
        value = loss(weights, tokens, targets)
        value.backward()
        return float(value.detach()), {k: w.grad.numpy().copy() for k, w in weights.items()}

    return loss_and_gradient, take_step


# --- checking, then timing ---------------------------------------------------------------------

def agrees(name: str, loss_and_gradient, take_step, expected: dict, batch, as_arrays) -> bool:
    """Whether a framework's loss and gradient of the first batch and the losses of the next
    CHECKED_STEPS steps agree with autotrace's (`expected`); prints what differs."""
    arrays = as_arrays(*batch)
    value, gradients = loss_and_gradient(*arrays)
    # Relative to the largest gradient: the key biases' gradients are zero but for rounding
    # (adding a constant to every key's score of a query leaves its softmax as it is).
    scale = max(numpy.abs(gradient).max() for gradient in expected["gradients"].values())
    differences = [key for key, gradient in expected["gradients"].items()
                   if not numpy.allclose(gradients[key], gradient, rtol=GRADIENT_RTOL,
                                         atol=GRADIENT_RTOL * scale)]
    if not math.isclose(value, expected["loss"], rel_tol=GRADIENT_RTOL) or differences:
        print(f"  {name}: loss {value!r} against autotrace's {expected['loss']!r}; gradients "
              f"that differ: {differences or 'none'}: left out")
        return False
    losses = [take_step(*arrays) for _ in range(CHECKED_STEPS)]
    if not numpy.allclose(losses, expected["losses"], rtol=STEPPED_RTOL, atol=0):
        print(f"  {name}: losses of {CHECKED_STEPS} steps {losses} against autotrace's "
              f"{expected['losses']}: left out")
        return False
    print(f"  {name}: the same loss, gradient and {CHECKED_STEPS} steps as autotrace")
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each step")
    parser.add_argument("--one-core", action="store_true",
                        help="run the whole process on one CPU core, every library's loops on "
                             "one thread")
    options = parser.parse_args(argv)
    if options.one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        autotrace.config.cpu_threads(1)
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false").strip()

    example = runpy.run_path(str(EXAMPLE), run_name="example")
    _, _, indices = example["load_text"]()
    batch = example["random_windows"](indices, CONTEXT, BATCH, numpy.random.default_rng(0))
    model, autotrace_step = autotrace_model_and_step(example, batch[0])
    names = short_names(model)
    initial = {names[v.name]: v.numpy().copy() for v in model.trainable_variables}
    value, pairs = autotrace.implicit_value_and_grad(example["loss"])(model, *batch)
    expected = {"loss": float(value), "gradients": {names[v.name]: numpy.asarray(g)
                                                    for g, v in pairs}}
    expected["losses"] = [float(autotrace_step(*batch)) for _ in range(CHECKED_STEPS)]

    print(f"python {platform.python_version()}, numpy {numpy.__version__}, {os.cpu_count()} "
          f"CPUs, running on {len(os.sched_getaffinity(0))}; BLAS threads "
          f"{BLAS_THREADS}, "
          f"autotrace kernel threads "
          f"{autotrace.config.cpu_threads()}")
    print(f"batch {BATCH} x {CONTEXT} characters, width {WIDTH}, {HEADS} heads, {DEPTH} "
          f"blocks, {sum(w.size for w in initial.values())} weights, float64")
    calls = {"autotrace": lambda: autotrace_step(*batch)}
    print("Checking each framework against autotrace:")
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        print("  jax is not installed: its column is skipped")
        jax = None
    if jax is not None:
        print(f"  jax {jax.__version__}")
        loss_and_gradient, take_step = jax_trainer(jax, jnp, initial)
        if agrees("jax.jit", loss_and_gradient, take_step, expected, batch,
                  lambda t, y: (jnp.asarray(t), jnp.asarray(y))):
            arrays = (jnp.asarray(batch[0]), jnp.asarray(batch[1]))
            calls["jax.jit"] = lambda: take_step(*arrays)
    try:
        import torch
    except ImportError:
        print("  torch is not installed: its columns are skipped")
        torch = None
    if torch is not None:
        # its own loops on every core the process may use (OMP_NUM_THREADS, set to 1 for BLAS
        # with --one-core, would hold them to one)
        torch.set_num_threads(len(os.sched_getaffinity(0)))
        print(f"  torch {torch.__version__}, {torch.get_num_threads()} threads")
        arrays = (torch.from_numpy(batch[0]), torch.from_numpy(batch[1]))
        for label, compiled in (("torch eager", False), ("torch.compile", True)):
            try:
                loss_and_gradient, take_step = torch_trainer(torch, initial, compiled)
                if agrees(label, loss_and_gradient, take_step, expected, batch,
                          lambda t, y: (torch.from_numpy(t), torch.from_numpy(y))):
                    calls[label] = lambda step=take_step: step(*arrays)
            except Exception as error:  # torch.compile needs a C compiler, and may fail
                print(f"  {label} does not run here ({first_line(error)}): left out")

    times = best_times_in_turns(calls, options.repeat)
    print(f"\nTime per training step, best of {options.repeat}, and autotrace's time over each:")
    for name, seconds in times.items():
        print(f"  {name:<14} {seconds * 1e3:9.1f} ms  {times['autotrace'] / seconds:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
