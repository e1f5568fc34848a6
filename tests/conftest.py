"""Settings for the whole test run."""
import atexit
import gc
import os
import re
import shutil
import sys
import tempfile

import pytest

# A test worker (pytest-xdist runs one per core) runs NumPy's BLAS on one thread, as the
# examples and benchmarks do: OpenBLAS's own threads would wait for the cores the other
# workers hold (two workers training the digits example took five times as long each).
# Set before NumPy loads its BLAS, which reads them then; subprocesses of the tests inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

# The test run compiles autotrace's modules to bytecode once, into a directory of its own,
# rather than in every process: the workers and the subprocesses the tests start (the CLI, the
# examples, a pytest run of tests/gpu) each import it, about 0.9 s from source and half that
# from bytecode. Where PYTHONDONTWRITEBYTECODE is set, nothing would be kept at all. Set by the
# first process, before it starts the workers, which inherit it; removed when it exits.
if not os.environ.get("AUTOTRACE_TEST_BYTECODE"):
    _bytecode = tempfile.mkdtemp(prefix="autotrace-test-bytecode-")
    os.environ["AUTOTRACE_TEST_BYTECODE"] = os.environ["PYTHONPYCACHEPREFIX"] = _bytecode
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix, sys.dont_write_bytecode = _bytecode, False
    atexit.register(shutil.rmtree, _bytecode, ignore_errors=True)


# The test modules keep thousands of functions, with the trees and derivatives made from them,
# for the whole run: the cyclic garbage collector's full collections, which walk all of it,
# took about a tenth of the run's time at Python's thresholds (700, 10, 10). A larger first
# generation lets the short-lived trees of each transform die young, and full collections run
# rarely (tests that need one call gc.collect()).
gc.set_threshold(20000, 20, 20)


@pytest.fixture(autouse=True, scope="session")
def kernel_cache_of_the_test_run(tmp_path_factory):
    """Kernels the compiled CPU backend builds during the tests are cached in a directory of
    the test run, not in the user's ~/.cache/autotrace/kernels."""
    before = os.environ.get("AUTOTRACE_CACHE_DIR")
    os.environ["AUTOTRACE_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernels"))
    yield
    if before is None:
        del os.environ["AUTOTRACE_CACHE_DIR"]
    else:
        os.environ["AUTOTRACE_CACHE_DIR"] = before


def pytest_sessionfinish(session, exitstatus):
    """Fail the run if anything imported runtime/ or transforms/ as top-level packages: that is
    a second copy of each module beside autotrace.runtime's (two op registries, two state
    stores), which only a checkout on sys.path allows and an installed autotrace never does."""
    copies = sorted(name for name in ("runtime", "transforms") if name in sys.modules)
    if copies:
        print(f"\nimported as top-level packages: {', '.join(copies)}; import them as "
              f"autotrace.{copies[0]}", file=sys.stderr)
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    """The lines tests left for the end of the run (`record_property("random programs",
    line)`): each random-program test's counts, also where workers ran the tests."""
    lines = [value for reports in terminalreporter.stats.values() for report in reports
             for name, value in getattr(report, "user_properties", ())
             if name == "random programs"]
    if lines:
        terminalreporter.write_sep("-", "random programs")
        first_seed = (lambda line: int(re.match(r"seeds (\d+)", line).group(1))
                      if re.match(r"seeds \d+", line) else -1)
        for line in sorted(set(lines), key=first_seed):
            terminalreporter.write_line(line)


def pytest_collection_modifyitems(config, items):
    """Tests marked long_running first, one at the start of each worker's share. pytest-xdist's
    worksteal gives each worker a contiguous share of the tests, runs each share in order, and
    lets an idle worker take the end of another's: a long test left for the end of the run
    would keep one worker busy while the others wait. Started first, the long tests overlap,
    and the run ends on short ones. Only the order changes."""
    long_running = [item for item in items if item.get_closest_marker("long_running")]
    if not long_running:
        return
    others = [item for item in items if not item.get_closest_marker("long_running")]
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    shares = [[] for _ in range(workers)]
    for index, item in enumerate(long_running):
        shares[index % workers].append(item)
    ordered, remaining = [], len(items)
    for worker, share in enumerate(shares):  # the sizes worksteal hands out, in its order
        size = remaining // (workers - worker)
        remaining -= size
        ordered += share
        fill = max(0, size - len(share))
        ordered += others[:fill]
        del others[:fill]
    items[:] = ordered + others
