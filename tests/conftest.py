"""Settings for the whole test run."""
import os
import re
import sys

import pytest

# A test worker (pytest-xdist runs one per core) runs NumPy's BLAS on one thread, as the
# examples and benchmarks do: OpenBLAS's own threads would wait for the cores the other
# workers hold (two workers training the digits example took five times as long each).
# Set before NumPy loads its BLAS, which reads them then; subprocesses of the tests inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")


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
