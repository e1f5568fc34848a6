"""Settings for the whole test run."""
import os
import sys

import pytest


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
