"""The disk cache of compiled kernels (runtime/backends/llvm/compiler.py): a cache file that is cut,
damaged, of an earlier format, of another compiler or another module is compiled again and
rewritten, never loaded. Each damaged file is read by a new process, where LLVM aborting on
damaged object code (as it does) would show as a crash, not as a failed test in this one."""
import ctypes
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autotrace.runtime.backends.llvm import compiler as llvm

if not llvm.available():
    pytest.skip("llvmlite is not installed (pip install llvmlite): the compiled CPU backend "
                "is not available", allow_module_level=True)

REPOSITORY = Path(__file__).resolve().parent.parent.parent

TWICE_IR = """
define double @twice(double %x) {
  %y = fadd double %x, %x
  ret double %y
}
"""
# Object code that is not the one of TWICE_IR: `twice` computing 3x, and no `twice` at all.
THRICE_IR = TWICE_IR.replace("%y = fadd double %x, %x", "%y = fmul double %x, 3.0")
OTHER_IR = TWICE_IR.replace("@twice", "@other")

# The first line of the files of the earlier format, whose checksum covered the code alone.
OLD_MAGIC = b"autotrace-kernel-object 1\n"

IN_A_NEW_PROCESS = """
import ctypes, json, os, sys
from autotrace.runtime.backends.llvm import compiler as llvm
ir = sys.argv[1]
for directory in sys.argv[2:]:  # a cache directory holding one damaged file each
    os.environ["AUTOTRACE_CACHE_DIR"] = directory
    runs = []
    for _ in range(2):  # the damaged file, then the file the first run wrote, as a new process
        address = llvm.compile_module(ir, ["twice"])["twice"]
        twice = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)
        runs.append({"result": twice(2.5), **{kind: len(times) for kind, times in
                                              llvm.statistics().items()}})
        llvm.forget_compiled()
    print(json.dumps(runs), flush=True)
"""


def cache_file(directory: Path, ir: str) -> Path:
    """Compile `ir` with `directory` as the disk cache; its cache file."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOTRACE_CACHE_DIR", str(directory))
        llvm.compile_module(ir, ["other" if "@other" in ir else "twice"])
    [path] = directory.iterdir()
    assert path.name == llvm.cache_key(ir) + ".o"
    return path


def code_of(data: bytes) -> bytes:
    """The object code in a cache file: after its header's five lines."""
    return data.split(b"\n", 5)[5]


def flipped(code: bytes, position: int) -> bytes:
    return code[:position] + bytes(byte ^ 0xFF for byte in code[position:position + 8]) + (
        code[position + 8:])


def old_format(code: bytes) -> bytes:
    return OLD_MAGIC + hashlib.sha256(code).hexdigest().encode() + b"\n" + code


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The cache files of TWICE_IR (the good one), THRICE_IR and OTHER_IR."""
    directory = tmp_path_factory.mktemp("kernel-files")
    return {name: cache_file(directory / name, ir).read_bytes()
            for name, ir in [("twice", TWICE_IR + f"; {directory}\n"),
                             ("thrice", THRICE_IR), ("other", OTHER_IR)]}, directory


def with_version(data: bytes, line: bytes) -> bytes:
    """`data` with its third line (what compiled it) replaced, and its checksum recomputed
    as the format does: a file as another llvmlite would write it."""
    magic, key, _, length, _, code = data.split(b"\n", 5)
    header = b"\n".join([magic, key, line, length]) + b"\n"
    return header + b"sha256 " + hashlib.sha256(header + code).hexdigest().encode() + b"\n" + code


# How the good file is damaged: a function of (the good file's bytes, the other files' bytes).
DAMAGED = {
    "empty": lambda good, others: b"",
    "cut in the header": lambda good, others: good[:40],
    "cut in the code": lambda good, others: good[:-100],
    "a byte of the code flipped": lambda good, others: flipped(good, len(good) - 300),
    # An earlier autotrace's file: its checksum of the code alone is right, the code is not.
    # Loaded, the first aborts LLVM (a section header past the end) and the second gives 3x.
    "old format, flipped code, checksum recomputed":
        lambda good, others: old_format(flipped(code_of(good), len(code_of(good)) // 2)),
    "old format, another module's code":
        lambda good, others: old_format(code_of(others["thrice"])),
    "another llvmlite": lambda good, others: with_version(good, b"llvmlite 0.1.0 llvm 3.0.0 "
                                                                b"format 1"),
    "another kernel format": lambda good, others: with_version(
        good, good.split(b"\n")[2].replace(b"format ", b"format 9")),
    "another module's file under this name": lambda good, others: others["thrice"],
}


def without_the_function(good: bytes, others: dict) -> bytes:
    """A file whose header and checksum are right for the key of `good` but whose code, which
    LLVM takes, lacks `twice` (a file written for this key by mistake): what is loaded is
    checked too."""
    magic, key, compiler, _, _, _ = good.split(b"\n", 5)
    code = code_of(others["other"])
    header = b"\n".join([magic, key, compiler, f"bytes {len(code)}".encode()]) + b"\n"
    return header + b"sha256 " + hashlib.sha256(header + code).hexdigest().encode() + b"\n" + code


DAMAGED["a right header, code without the function"] = without_the_function


def test_a_damaged_cache_file_is_compiled_again_and_rewritten(files, tmp_path):
    contents, directory = files
    good = contents["twice"]
    ir = TWICE_IR + f"; {directory}\n"
    name = llvm.cache_key(ir) + ".o"
    directories = []
    for number, damage in enumerate(DAMAGED.values()):
        damaged = damage(good, contents)
        assert damaged != good
        directories.append(tmp_path / str(number))
        directories[-1].mkdir()
        (directories[-1] / name).write_bytes(damaged)
    assert llvm.read_cached_object(directories[-1] / name) is not None  # right header
    # One process for all (a process each would take seconds each); each prints its line
    # when done, so a crash names the file that caused it.
    finished = subprocess.run(
        [sys.executable, "-c", IN_A_NEW_PROCESS, ir, *map(str, directories)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    lines = finished.stdout.splitlines()
    assert finished.returncode == 0, (
        f"crashed ({finished.returncode}) on the file {list(DAMAGED)[len(lines)]!r}: "
        f"{finished.stderr[-2000:]}")
    for damage, line, cache in zip(DAMAGED, lines, directories, strict=True):
        first, second = json.loads(line)
        assert first == {"result": 5.0, "compile_ms": 1, "load_ms": 0}, damage
        assert second == {"result": 5.0, "compile_ms": 0, "load_ms": 1}, damage
        assert (cache / name).read_bytes() == good, damage


def test_the_header_names_the_key_the_compiler_and_the_length(files):
    contents, _ = files
    import llvmlite.binding
    magic, key, compiler, length, checksum, code = contents["thrice"].split(b"\n", 5)
    assert magic == b"autotrace-kernel-object 2"
    assert key == f"key {llvm.cache_key(THRICE_IR)}".encode()
    version = ".".join(map(str, llvmlite.binding.llvm_version_info))
    assert compiler == (f"llvmlite {llvmlite.__version__} llvm {version} format "
                        f"{llvm.KERNEL_FORMAT}").encode()
    assert length == f"bytes {len(code)}".encode()
    header = b"\n".join([magic, key, compiler, length]) + b"\n"
    assert checksum == b"sha256 " + hashlib.sha256(header + code).hexdigest().encode()
    # The object code itself computes 3x.
    address = llvm.compile_module(THRICE_IR, ["twice"])["twice"]
    assert ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)(2.5) == 7.5


def test_a_file_that_reads_back_differently_is_not_left_in_the_cache(files, tmp_path,
                                                                    monkeypatch):
    contents, _ = files
    path = tmp_path / (llvm.cache_key(THRICE_IR) + ".o")
    read_bytes = Path.read_bytes

    def losing_a_byte(self):  # a file system that loses the last byte of what is written
        return read_bytes(self)[:-1]
    monkeypatch.setattr(Path, "read_bytes", losing_a_byte)
    with pytest.warns(RuntimeWarning) as warned:
        llvm.write_cached_object(path, code_of(contents["thrice"]))
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []
    [warning] = warned
    assert str(warning.message).startswith(
        f"autotrace could not cache a compiled kernel in {tmp_path} ({tmp_path}/{path.name}")
    assert str(warning.message).endswith(
        ".tmp read back differs from what was written); it compiles again in the next "
        "process. Set AUTOTRACE_CACHE_DIR to a writable directory to keep them")
