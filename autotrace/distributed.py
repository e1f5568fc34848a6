"""Data-parallel training over MPI (through mpi4py), as Horovod does for TensorFlow.

The same script runs on every process; each process (a rank) trains on its shard of the data,
and the gradients are averaged across ranks before every update, so all ranks apply the same
update to the same variables:

    import autotrace as at
    from autotrace import distributed

    distributed.init()
    optimizer = distributed.DistributedOptimizer(at.optimizers.Adam(1e-3))
    distributed.broadcast_variables(model.trainable_variables, root=0)   # same start
    for x, y in dataset.shard(distributed.size(), distributed.rank()):
        loss, grads_and_vars = at.implicit_value_and_grad(lambda: loss_fn(model(x), y))()
        optimizer.apply_gradients(grads_and_vars)

    mpiexec -n 4 python train.py

Not launched under an MPI launcher, a script runs as one process (`size()` 1, `rank()` 0)
and mpi4py is not imported at all, so it need not be installed. Under `mpiexec`, mpi4py is
required (`pip install -e '.[distributed]'`, which brings mpich's `mpiexec` too).

Averaging packs the gradients into a few large contiguous buffers (buckets of about 25 MB, in
the order of the variables, which is the same on every rank) and reduces each with one MPI
Allreduce, since a reduction's latency, not its bandwidth, dominates for small arrays.
"""
from __future__ import annotations

import os
import sys
import time
import zlib
from traceback import format_exception
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from autotrace.placement import to_device, to_numpy
from autotrace.optimizers import Optimizer
from autotrace.variables import Variable
from autotrace.runtime.devices import device_of, is_gpu_array
from autotrace.runtime.ops import source_globals
from autotrace.runtime.primitives.batching import refuse_batching
from autotrace.runtime.primitives.registry import Primitive, bind, call_source, register
from autotrace.runtime.tracing.tracer import Tracer

__all__ = ["init", "is_initialized", "rank", "size", "local_rank", "allreduce_mean",
           "allreduce_sum", "sum_metric_states", "broadcast_variables", "DistributedOptimizer",
           "DistributedError", "DEFAULT_BUCKET_BYTES"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports


DEFAULT_BUCKET_BYTES = 25 * 2 ** 20  # allreduce_mean's default bucket_bytes: 25 MiB

# (rank, size, local rank) variables that MPI launchers set in the processes they start.
_LAUNCHER_ENVIRONMENTS = (
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),              # MPICH's hydra, Intel MPI
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),  # Open MPI
)

_INSTALL_HINT = "pip install -e '.[distributed]'"


class DistributedError(RuntimeError):
    """The ranks disagree (different arrays to reduce), or MPI is missing under a launcher.

    Examples:
        >>> w = autotrace.Variable(np.ones(2))
        >>> @autotrace.function
        ... def step(x):
        ...     distributed.broadcast_variables([w])
        ...     return w * x
        >>> try:
        ...     step(np.ones(2))
        ... except DistributedError as error:
        ...     print(error)   # doctest: +ELLIPSIS
        broadcast_variables is called inside autotrace.function; call it outside, ...
    """


class _World:
    """This process's place among the ranks: one per process, as MPI's own COMM_WORLD is."""

    def __init__(self, communicator, rank: int, size: int, local_rank: int):
        self.communicator = communicator  # None when running as one process
        self.rank = rank
        self.size = size
        self.local_rank = local_rank


_world: _World | None = None  # set by init(); the process's MPI state is process-wide too


def launcher_environment() -> tuple[int, int, int] | None:
    """(rank, size, local rank) read from the variables an MPI launcher sets, or None when
    this process was not started by one (mpiexec of MPICH or Open MPI)."""
    for rank_name, size_name, local_name in _LAUNCHER_ENVIRONMENTS:
        if rank_name in os.environ and size_name in os.environ:
            rank_ = int(os.environ[rank_name])
            return rank_, int(os.environ[size_name]), int(os.environ.get(local_name, rank_))
    return None


def init(communicator=None, abort_on_exception: bool = True) -> None:
    """Join the other ranks (once; later calls do nothing).

    Arguments:
        communicator: an mpi4py communicator to train over (default: MPI.COMM_WORLD when
            launched under mpiexec; one process of its own otherwise, without importing MPI).
        abort_on_exception: with several ranks, an exception that ends one rank's script is
            printed and then ends every rank (MPI Abort), instead of leaving the others
            waiting forever in their next reduction.

    Raises:
        DistributedError: launched under mpiexec with several ranks, but mpi4py is missing.

    Examples:
        >>> distributed.init()                    # run as `python train.py`: one rank
        >>> distributed.rank(), distributed.size()
        (0, 1)
    """
    global _world
    if _world is not None:
        return
    launched = launcher_environment()
    if communicator is None and launched is None:
        _world = _World(None, 0, 1, 0)
        return
    MPI = _import_mpi(launched)
    communicator = MPI.COMM_WORLD if communicator is None else communicator
    # Ranks that share a node share its memory: their rank among themselves is the local rank.
    node = communicator.Split_type(MPI.COMM_TYPE_SHARED)
    _world = _World(communicator, communicator.Get_rank(), communicator.Get_size(),
                    node.Get_rank())
    node.Free()
    if abort_on_exception and _world.size > 1:
        sys.excepthook = _abort_all_ranks(communicator)


_FORWARD_SECONDS = 0.5  # how long a failing rank waits for its traceback to be forwarded


def _abort_all_ranks(communicator):
    def excepthook(kind, value, traceback):
        # The traceback and the reason in one unbuffered write, then a moment for the
        # launcher to forward it: once a rank aborts, mpiexec stops forwarding output, and
        # under load it was seen to drop what a rank wrote just before.
        text = "".join(format_exception(kind, value, traceback)) + (
            f"autotrace.distributed: rank {communicator.Get_rank()} raised {kind.__name__}; "
            f"aborting all {communicator.Get_size()} ranks\n")
        sys.stderr.flush()
        os.write(sys.stderr.fileno(), text.encode(errors="replace"))
        time.sleep(_FORWARD_SECONDS)
        communicator.Abort(1)
    return excepthook


def _import_mpi(launched):
    try:
        from mpi4py import MPI
    except ImportError as error:
        where = (f"rank {launched[0]} of {launched[1]} started by an MPI launcher"
                 if launched else "an explicit communicator")
        raise DistributedError(
            f"autotrace.distributed: this process is {where}, but mpi4py cannot be "
            f"imported ({error}); install it with {_INSTALL_HINT}") from error
    return MPI


def is_initialized() -> bool:
    """Whether this process has joined its ranks: True after `init()`, or after a first call
    that needs them (`rank()`, `size()`, a reduction), which calls `init()`; False before.
    A library can ask it before choosing the communicator to give `init()`.

    Examples:
        >>> distributed.init()
        >>> distributed.is_initialized()
        True
    """
    return _world is not None


def _current() -> _World:
    if _world is None:
        init()
    return _world


def rank() -> int:
    """This process's number among the ranks, 0 to size() - 1 (0 when run as one process).

    Examples:
        >>> distributed.rank()                    # under `mpiexec -n 4`: 0, 1, 2 or 3
        0
    """
    return _current().rank


def writes_files() -> bool:
    """Whether this process writes the files ranks share (checkpoints): rank 0, or the only
    process. Checkpoint.save and CheckpointManager.save ask it."""
    return _world is None or _world.rank == 0


def barrier() -> None:
    """Wait until every rank gets here (nothing to wait for as one process)."""
    if _world is not None and _world.size > 1:
        _world.communicator.Barrier()


def size() -> int:
    """The number of ranks (1 when not launched under mpiexec).

    Examples:
        >>> distributed.size()                    # under `mpiexec -n 4`: 4
        1
    """
    return _current().size


def local_rank() -> int:
    """This process's number among the ranks on its machine (to pick its GPU, for example).

    Examples:
        >>> distributed.local_rank()              # 0 to the number of ranks on this machine - 1
        0
    """
    return _current().local_rank


# --- collectives ------------------------------------------------------------------------------
def allreduce_mean(arrays: Sequence, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                   name: str = "allreduce_mean") -> list[np.ndarray]:
    """The mean over all ranks of each array, as new arrays of the same shapes and dtypes.

    Every rank must pass arrays of the same shapes and dtypes in the same order (checked: a
    DistributedError names the first difference, on every rank). The arrays are packed into
    buckets of at most `bucket_bytes` (an array larger than that gets a bucket of its own;
    a change of dtype starts a new bucket) and each bucket is reduced in place with one
    non-blocking MPI Iallreduce, started as soon as it is packed, so packing and unpacking
    overlap the transfers; float32 stays float32, float64 float64. A CuPy array is reduced
    through host memory and its mean returned on its GPU.

    Examples:
        >>> distributed.allreduce_mean([np.array([1.0, 2.0]) * (distributed.rank() + 1)])
        [array([1., 2.])]
        >>> # under `mpiexec -n 2`, each of the 2 ranks gets [array([1.5, 3. ])]
    """
    return _allreduce(arrays, bucket_bytes, name, mean=True)


def allreduce_sum(arrays: Sequence, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                  name: str = "allreduce_sum") -> list[np.ndarray]:
    """The sum over all ranks of each array (as `allreduce_mean`, without the division).

    Examples:
        >>> distributed.allreduce_sum([np.array([1.0, 2.0]) * (distributed.rank() + 1)])
        [array([1., 2.])]
        >>> # under `mpiexec -n 2`, each of the 2 ranks gets [array([3., 6.])]
    """
    return _allreduce(arrays, bucket_bytes, name, mean=False)


def _allreduce(arrays: Sequence, bucket_bytes: int, name: str, mean: bool) -> list:
    arrays = list(arrays)
    if any(isinstance(array, Tracer) for array in arrays):
        # Inside autotrace.function: one `allreduce` op of the graph, which runs the same
        # bucketed reduction each time the graph runs (never folded, merged or dropped).
        reduced = bind("allreduce", *arrays, mean=mean, bucket_bytes=bucket_bytes, what=name)
        return list(reduced) if isinstance(reduced, tuple) else [reduced]
    # GPU arrays go through host memory (MPI from PyPI is not CUDA-aware) and come back to
    # their GPU, so that an optimizer gets each gradient where its Variable is.
    devices = [device_of(array) if is_gpu_array(array) else None for array in arrays]
    arrays = [_host_array(array, name, position) for position, array in enumerate(arrays)]
    world = _current()
    if world.size == 1:
        reduced = [array.copy() for array in arrays]
    else:
        _check_same_layout(world, arrays, name)
        from mpi4py import MPI
        # Each bucket's reduction starts as soon as it is packed (non-blocking), so packing
        # the next bucket, and unpacking the ones done, overlap with the transfers.
        started = []
        for bucket in _buckets(arrays, bucket_bytes):
            buffer = _pack(bucket)
            started.append((world.communicator.Iallreduce(MPI.IN_PLACE, buffer, op=MPI.SUM),
                            buffer, bucket))
        reduced = []
        for request, buffer, bucket in started:
            request.Wait()
            if mean:
                buffer /= world.size
            reduced.extend(_unpack(buffer, bucket))
    return [array if device is None else to_device(array, device)
            for array, device in zip(reduced, devices)]


@dataclass(frozen=True)
class _Collective(Primitive):
    """A graph op that talks to the other ranks: the passes keep it as it is, as they keep a
    print (runtime/passes/cleanup.py has_side_effect)."""

    side_effect: Callable = lambda attrs: True


def _allreduce_op(*arrays, mean: bool, bucket_bytes: int, what: str):
    reduced = _allreduce(arrays, bucket_bytes, what, mean)
    return reduced[0] if len(reduced) == 1 else tuple(reduced)


def _allreduce_types(*avals, mean, bucket_bytes, what):
    return avals[0] if len(avals) == 1 else tuple(avals)


source_globals["allreduce"] = _allreduce_op
register(_Collective("allreduce", _allreduce_op, _allreduce_types, fresh=True,
                     source=lambda args, attrs: call_source("allreduce", args, attrs),
                     batching=refuse_batching(
                         "it sums over the ranks of a distributed run; take the per-example "
                         "values out of vmap first, then all-reduce them")))


def sum_metric_states(*metrics) -> None:
    """Make each metric's state the sum of its state on all ranks, so that `result()` is the
    metric over what every rank saw (the mean loss, the accuracy over the whole test set).
    Call it once after the ranks' updates (summing twice counts each rank again), and
    `reset_state()` before the next round. The metrics of autotrace.metrics keep sums
    (total, count), which is what makes summing them right.

    Examples:
        >>> labels, predictions = np.array([0, 1, 1, 0]), np.eye(2)[[0, 1, 0, 0]]
        >>> rank, size = distributed.rank(), distributed.size()
        >>> accuracy = autotrace.metrics.SparseCategoricalAccuracy()
        >>> _ = accuracy(labels[rank::size], predictions[rank::size])   # this rank's part
        >>> distributed.sum_metric_states(accuracy)
        >>> float(accuracy.result())              # over the whole set, whatever the number of ranks
        0.75
    """
    variables = [variable for metric in metrics for variable in metric.variables]
    for variable, total in zip(variables, allreduce_sum(
            [variable.numpy() for variable in variables], name="sum_metric_states")):
        variable.assign(total)


def broadcast_variables(variables: Iterable[Variable], root: int = 0,
                        bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> None:
    """Give every rank's `variables` the values rank `root` holds (at the start of training,
    so that all ranks start alike, and after restoring a checkpoint on one rank).

    Examples:
        >>> model = autotrace.layers.Dense(2)
        >>> _ = model(np.ones((1, 3)))            # made, with random values on each rank
        >>> distributed.broadcast_variables(model.variables, root=0)   # now rank 0's everywhere
    """
    variables = list(variables)
    for position, variable in enumerate(variables):
        if not isinstance(variable, Variable):
            raise TypeError(f"broadcast_variables: item {position} is not an "
                            f"autotrace.Variable: {variable!r}")
    if any(isinstance(variable.read(), Tracer) for variable in variables):
        raise DistributedError(
            "broadcast_variables is called inside autotrace.function; call it outside, before "
            "training starts (and again after restoring a checkpoint)")
    world = _current()
    if not 0 <= root < world.size:
        raise ValueError(f"broadcast_variables: root {root} is not a rank (there are "
                         f"{world.size})")
    if world.size == 1:
        return
    arrays = [_host_array(variable.numpy(), "broadcast_variables", position)
              for position, variable in enumerate(variables)]
    _check_same_layout(world, arrays, "broadcast_variables")
    start = 0
    for bucket in _buckets(arrays, bucket_bytes):
        buffer = _pack(bucket)
        world.communicator.Bcast(buffer, root=root)
        for offset, value in enumerate(_unpack(buffer, bucket)):
            variables[start + offset].assign(value)
        start += len(bucket)


def _host_array(value, name: str, position: int) -> np.ndarray:
    if isinstance(value, Tracer):
        raise DistributedError(
            f"{name}: item {position} is a traced value; inside autotrace.function only "
            "allreduce_mean, allreduce_sum and DistributedOptimizer reduce across ranks "
            "(broadcasting Variables is done outside it, before training)")
    if isinstance(value, Variable):
        value = value.numpy()
    array = to_numpy(value) if is_gpu_array(value) else np.asarray(value)
    if array.dtype.kind not in "fc" or array.dtype.itemsize < 4:
        raise TypeError(f"{name}: item {position} has dtype {array.dtype}; only float32, "
                        "float64, complex64 and complex128 arrays are averaged across ranks")
    return array


def _check_same_layout(world: _World, arrays: list, name: str) -> None:
    """Raise the same DistributedError on every rank when their arrays differ in shape, dtype
    or number: reducing them anyway would mix unrelated numbers or hang."""
    layout = [(array.shape, array.dtype.str) for array in arrays]
    checksum = zlib.crc32(repr(layout).encode())
    if len(set(world.communicator.allgather(checksum))) == 1:
        return
    layouts = world.communicator.allgather(layout)
    for other, other_layout in enumerate(layouts):
        if other_layout != layouts[0]:
            raise DistributedError(
                f"{name}: the ranks pass different arrays: rank 0 has {_describe(layouts[0])}"
                f", rank {other} has {_describe(other_layout)}. Every rank must reduce the "
                "same variables in the same order (a gradient None on some ranks only, or "
                "variables made in a different order, do this)")


def _describe(layout: list) -> str:
    shown = ", ".join(f"{np.dtype(dtype).name}{list(shape)}" for shape, dtype in layout[:6])
    more = f", ... ({len(layout)} arrays)" if len(layout) > 6 else ""
    return f"[{shown}{more}]"


def _buckets(arrays: list, bucket_bytes: int) -> list[list[np.ndarray]]:
    """Consecutive arrays of one dtype, up to `bucket_bytes` each: the same on every rank,
    since it depends on the shapes and order only."""
    buckets, current, current_bytes = [], [], 0
    for array in arrays:
        if current and (array.dtype != current[0].dtype
                        or current_bytes + array.nbytes > bucket_bytes):
            buckets.append(current)
            current, current_bytes = [], 0
        current.append(array)
        current_bytes += array.nbytes
    if current:
        buckets.append(current)
    return buckets


def _pack(bucket: list) -> np.ndarray:
    return np.concatenate([array.ravel() for array in bucket])


def _unpack(buffer: np.ndarray, bucket: list) -> list[np.ndarray]:
    arrays, start = [], 0
    for array in bucket:
        arrays.append(buffer[start:start + array.size].reshape(array.shape))
        start += array.size
    return arrays


# --- the optimizer wrapper --------------------------------------------------------------------
def DistributedOptimizer(optimizer, bucket_bytes: int = DEFAULT_BUCKET_BYTES):
    """`optimizer`, with an `apply_gradients` that first averages the gradients over all ranks
    (with `allreduce_mean`), then applies them as `optimizer` does. With the loss a mean over
    each rank's equal-size shard of the batch, the average is the gradient of the whole batch.
    `minimize` averages too, since it calls `apply_gradients`.

    The result is an instance of a subclass of the optimizer's class (DistributedAdam for an
    Adam) that shares the optimizer's state (iterations, learning rate, slots): using either
    object updates both, and a checkpoint names the state alike, so one written while training
    on several ranks restores into a plain optimizer and back.

    Pairs whose gradient is None are passed on as they are (the optimizer skips them); every
    rank must have None for the same variables.

    Arguments:
        optimizer: any autotrace optimizer.
        bucket_bytes: the size of the buffers gradients are packed into.

    Examples:
        >>> w = autotrace.Variable(np.array([1.0, 2.0]))
        >>> optimizer = DistributedOptimizer(autotrace.optimizers.SGD(0.5))
        >>> type(optimizer).__name__
        'DistributedSGD'
        >>> _ = optimizer.apply_gradients([(np.array([1.0, 1.0]), w)])  # averaged over the ranks
        >>> w.numpy()
        array([0.5, 1.5])
    """
    if not isinstance(optimizer, Optimizer):
        raise TypeError("DistributedOptimizer: expected an autotrace optimizer "
                        f"(autotrace.optimizers.SGD, Adam, ...), got {optimizer!r}")
    if isinstance(optimizer, _AveragingGradients):
        return optimizer
    base = type(optimizer)
    distributed_class = type(f"Distributed{base.__name__}", (_AveragingGradients, base),
                             {"__module__": __name__})
    wrapped = object.__new__(distributed_class)
    wrapped.__dict__ = optimizer.__dict__  # one state, seen through either object
    wrapped._bucket_bytes = int(bucket_bytes)
    return wrapped


class _AveragingGradients:
    """What DistributedOptimizer adds to an optimizer's class."""

    _untracked_attributes = Optimizer._untracked_attributes + ("_bucket_bytes",)
    _bucket_bytes = DEFAULT_BUCKET_BYTES

    def apply_gradients(self, grads_and_vars: Iterable) -> Variable:
        pairs = [tuple(pair) if isinstance(pair, (tuple, list)) else pair
                 for pair in grads_and_vars]
        present = [position for position, pair in enumerate(pairs)
                   if isinstance(pair, tuple) and len(pair) == 2 and pair[0] is not None]
        # Malformed pairs are left to the optimizer, whose errors name them.
        averaged = allreduce_mean([pairs[position][0] for position in present],
                                  self._bucket_bytes,
                                  name=f"DistributedOptimizer({self.name})")
        for position, gradient in zip(present, averaged):
            pairs[position] = (gradient, pairs[position][1])
        return super().apply_gradients(pairs)

    def __repr__(self) -> str:
        optimizer_class = type(self).__bases__[1]  # after _AveragingGradients
        return (f"<autotrace.distributed.DistributedOptimizer of autotrace.optimizers."
                f"{optimizer_class.__name__} {self.name!r}>")
