"""Settings for the whole test run."""
import os

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
