"""Compiling LLVM IR for this machine's CPU with llvmlite, with an on-disk cache of object code.

    if llvm.available():
        addresses = llvm.compile_module(ir_text, ["kernel"])   # {"kernel": 140211...}
        tanh8 = llvm.vector_math("tanh", np.float64, 8)         # "_ZGVeN8v_tanh" or None

- The IR is compiled for the host: its triple, CPU name and features, at opt level 3 through
  LLVM's new pass manager. No fast-math flags are set anywhere: they would let LLVM reorder
  arithmetic and assume no NaN or inf, and a library built with -ffast-math switches the whole
  process to flush-to-zero (denormals read and written as 0) when it loads. Kernels here leave
  the floating-point control register (MXCSR) as they find it.
- Object code is cached under `$AUTOTRACE_CACHE_DIR` or `~/.cache/autotrace/kernels`, one file
  per module, named by a sha256 of everything that decides the machine code: the IR, the CPU
  name and features, the llvmlite and LLVM versions and `KERNEL_FORMAT`. A file starts with a
  header naming its format, its cache key, the llvmlite and LLVM versions and `KERNEL_FORMAT`
  that made it and the length of its code, then a sha256 of the header and the code. It is
  written whole to a temporary name, synced, read back and checked, and only then renamed, so
  a reader never sees half of one. A file that cannot be read, whose header is not exactly
  what this process would write for that key (another format, version or key: a file of an
  earlier autotrace whose checksum covered its code alone, say), whose checksum does not
  match, or whose code LLVM refuses or lacks a function, is compiled again and rewritten,
  never called: damaged object code handed to LLVM aborts the process, every run.
- glibc's vector math library (libmvec) gives tanh, exp, log, sin, ... on 2, 4 or 8 doubles at
  once, under the names of the x86 vector function ABI (`_ZGVeN8v_tanh`: AVX-512, 8 lanes).
  `vector_math` says whether this process has one; without libmvec (musl, macOS) callers use
  the scalar libm function per element.
- Compiled engines are kept for the life of the process: the addresses point into them. A
  module compiled or loaded once is not loaded again by this process.

llvmlite is a dependency, imported when first used: `available()` says whether it imports and
the native target initialises (`unavailable_reason()` why not).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import os
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

# Bump when the code that writes kernels changes what the same IR text means (calling
# conventions, the layout of arguments), so that old cache files are not loaded.
KERNEL_FORMAT = 1

_CACHE_MAGIC = b"autotrace-kernel-object 2\n"
# Engines stay alive as long as the process: compiled functions' addresses point into them.
_engines: list = []
# Cache file path -> {function name: address}, for modules already loaded in this process.
_loaded: dict[Path, dict[str, int]] = {}
# LLVM's context is shared: two threads tracing at once compile one at a time.
_compiling = threading.Lock()
# Milliseconds per module compiled from IR or read from the disk cache (`statistics`).
_timings: dict[str, list] = {"compile_ms": [], "load_ms": []}


@functools.cache
def _llvm():
    """llvmlite.binding with the native target initialised, and libmvec loaded if present."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for name in ("libmvec.so.1", ctypes.util.find_library("mvec")):
        if name:
            try:
                llvm.load_library_permanently(name)
                break
            except RuntimeError:
                continue
    return llvm


def available() -> bool:
    """Whether llvmlite can be imported and compiles for this machine."""
    return unavailable_reason() is None


@functools.cache
def unavailable_reason() -> str | None:
    """Why llvmlite cannot compile here (its import or target error, in a line), or None."""
    try:
        _llvm()
    except (ImportError, RuntimeError, OSError) as error:
        return f"{type(error).__name__}: {error}"
    return None


@functools.cache
def host() -> tuple[str, str, str]:
    """(triple, CPU name, CPU features) of this machine, as LLVM names them."""
    llvm = _llvm()
    features = llvm.get_host_cpu_features().flatten()
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), features


def has_feature(feature: str) -> bool:
    """Whether the host CPU has `feature` (`avx512f`, `avx2`, `fma`)."""
    return f"+{feature}" in host()[2].split(",")


def has_fused_multiply_add() -> bool:
    """Whether the host CPU computes a fused multiply-add (llvm.fma) in one instruction: x86's
    FMA3, and every aarch64."""
    return has_feature("fma") or host()[0].startswith(("aarch64", "arm64"))


# <fenv.h>'s exception flags, per architecture: (the ones NumPy warns on by default: invalid,
# division by zero, overflow; all of them).
_EXCEPTION_FLAGS = {"x86_64": (0x01 | 0x04 | 0x08, 0x3D), "aarch64": (0x01 | 0x02 | 0x04, 0x1F)}


def has_mxcsr() -> bool:
    """Whether this machine keeps its floating-point state in MXCSR (x86-64)."""
    return host()[0].startswith("x86_64")


def exception_flags() -> tuple[int, int] | None:
    """(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW, FE_ALL_EXCEPT) of <fenv.h> on this machine,
    for code that calls fetestexcept and its kin, or None where they are not known here."""
    return _EXCEPTION_FLAGS.get(host()[0].split("-")[0])


def vector_width(dtype) -> int:
    """How many values of `dtype` one vector register holds on this CPU (2, 4, 8 or 16 for
    float64 and float32 with SSE, AVX or AVX-512)."""
    if has_feature("avx512f"):
        register_bytes = 64
    elif has_feature("avx"):
        register_bytes = 32
    else:
        register_bytes = 16
    return register_bytes // np.dtype(dtype).itemsize


# The ISA letter of the x86 vector function ABI for a vector of this many bytes, and the CPU
# feature that the library's version for it needs.
_VECTOR_ABI = {16: ("b", "sse2"), 32: ("d", "avx2"), 64: ("e", "avx512f")}


def vector_math(name: str, dtype, width: int, arguments: int = 1) -> str | None:
    """The libmvec symbol computing libm's `name` on `width` values of `dtype` at once.

    Arguments:
        name: libm's name for float64 (`tanh`, `exp`, `atan2`); float32 adds the `f`.
        dtype: np.float64 or np.float32.
        width: lanes per call: the vector's byte size picks the ISA (16 SSE, 32 AVX2, 64
            AVX-512).
        arguments: how many vector arguments the function takes (2 for atan2, hypot, pow).
    Returns:
        the symbol (`_ZGVeN8v_tanh`) if this process can call it on this CPU, else None.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        return None
    abi = _VECTOR_ABI.get(width * dtype.itemsize)
    if abi is None or not has_feature(abi[1]):
        return None
    suffix = "f" if dtype == np.float32 else ""
    symbol = f"_ZGV{abi[0]}N{width}{'v' * arguments}_{name}{suffix}"
    return symbol if _llvm().address_of_symbol(symbol) else None


def next_step(index: str, step, bound: str, loop: str, leave: str, metadata: str = "") -> str:
    """The IR that ends one step of a counted loop: `%<index>.next = <index> + step`, and back
    to block `loop` while that is below `bound`, else on to `leave` (`metadata`: `!llvm.loop`
    hints for the branch, such as ", !llvm.loop !0")."""
    return (f"  %{index}.next = add nuw nsw i64 %{index}, {step}\n"
            f"  %{index}.more = icmp slt i64 %{index}.next, {bound}\n"
            f"  br i1 %{index}.more, label %{loop}, label %{leave}{metadata}")


# --- compiling ----------------------------------------------------------------------------------

def cache_directory() -> Path:
    """Where object code is cached: `$AUTOTRACE_CACHE_DIR`, or ~/.cache/autotrace/kernels."""
    configured = os.environ.get("AUTOTRACE_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "autotrace" / "kernels"


def cache_key(ir: str) -> str:
    """sha256 of everything that decides the machine code compiled from `ir`."""
    import llvmlite
    triple, cpu, features = host()
    version = ".".join(map(str, _llvm().llvm_version_info))
    text = "\0".join([ir, triple, cpu, features, llvmlite.__version__, version,
                      str(KERNEL_FORMAT)])
    return hashlib.sha256(text.encode()).hexdigest()


def compile_module(ir: str, names: list[str]) -> dict[str, int]:
    """Compile LLVM IR text for this CPU (or load it from the disk cache) and link it in.

    Arguments:
        ir: a module in LLVM's text form; external functions (libm, libmvec) are resolved
            in this process.
        names: the functions whose addresses to return.
    Returns:
        {name: address}, to call through ctypes. The code stays loaded until the process ends.
    Raises:
        RuntimeError: the IR does not parse or verify, or a name is not defined in it.
    Examples:
        >>> ir = ("define double @twice(double %x) {\\n"
        ...       "  %y = fadd double %x, %x\\n  ret double %y\\n}")
        >>> address = compile_module(ir, ["twice"])["twice"]
        >>> ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)(2.5)
        5.0
    """
    path = cache_directory() / f"{cache_key(ir)}.o"
    with _compiling:
        addresses = _loaded.get(path)
        if addresses is None or not set(names) <= set(addresses):
            start = time.perf_counter()
            code, kind, addresses = read_cached_object(path), "load_ms", None
            if code is not None:
                try:
                    addresses = _load_object(code, names)
                except RuntimeError:  # refused by LLVM, or without a function it should have
                    addresses = None
            if addresses is None:
                code, kind = _compile_object(ir), "compile_ms"
                write_cached_object(path, code)
                addresses = _load_object(code, names)
            _loaded[path] = addresses
            _timings[kind].append(1e3 * (time.perf_counter() - start))
    return {name: addresses[name] for name in names}


def statistics() -> dict:
    """Milliseconds spent on each module this process compiled ("compile_ms": from IR, with
    the disk write) or read from the disk cache ("load_ms"), in order, since the start or the
    last `forget_compiled()`."""
    return {kind: list(times) for kind, times in _timings.items()}


def forget_compiled() -> None:
    """Forget which modules this process has loaded and their timings, so that the next
    compile_module of each reads the disk cache as a new process would (for benchmarks and
    tests). Code already loaded stays: kernels made before keep calling it."""
    with _compiling:
        _loaded.clear()
        for times in _timings.values():
            times.clear()


def _target_machine():
    llvm = _llvm()
    triple, cpu, features = host()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=3,
                                        reloc="static", codemodel="jitdefault")


def _compile_object(ir: str) -> bytes:
    llvm = _llvm()
    module = llvm.parse_assembly(ir)
    module.verify()
    machine = _target_machine()
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    return machine.emit_object(module)


def _load_object(code: bytes, names: list[str]) -> dict[str, int]:
    llvm = _llvm()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    _engines.append(engine)
    addresses = {name: engine.get_function_address(name) for name in names}
    missing = [name for name, address in addresses.items() if not address]
    if missing:
        raise RuntimeError(f"the compiled module defines no function {', '.join(missing)}")
    return addresses


def _cache_header(key: str, code: bytes) -> bytes:
    """What a cache file holding `code` for the module of cache key `key` says before its
    checksum: the format, the key, what compiled it, the code's length (one line each)."""
    import llvmlite
    llvm_version = ".".join(map(str, _llvm().llvm_version_info))
    return (_CACHE_MAGIC + f"key {key}\nllvmlite {llvmlite.__version__} llvm {llvm_version} "
            f"format {KERNEL_FORMAT}\nbytes {len(code)}\n".encode())


def _cache_checksum(header: bytes, code: bytes) -> bytes:
    return b"sha256 " + hashlib.sha256(header + code).hexdigest().encode() + b"\n"


def _cached_code(data: bytes, key: str) -> bytes | None:
    """The code in the cache file contents `data` for cache key `key`, or None unless its
    header is the one this process writes for `key` and its checksum matches."""
    lines = data.split(b"\n", 5)
    if len(lines) < 6:
        return None
    code = lines[5]
    header = _cache_header(key, code)
    if data != header + _cache_checksum(header, code) + code:
        return None
    return code


def read_cached_object(path: Path) -> bytes | None:
    """The object code cached at `path` (named `<cache key>.o`), or None if there is none, or
    it was written for another key, format or compiler, or it fails its checksum."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return _cached_code(data, path.stem)


def write_cached_object(path: Path, code: bytes) -> None:
    """Write `code` with its header and checksum to `path` (named `<cache key>.o`)
    atomically, after reading the file written back and checking it; a cache that cannot be
    written (a read-only home) only costs compiling again next time."""
    header = _cache_header(path.stem, code)
    data = header + _cache_checksum(header, code) + code
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            # What is on the disk, not what was meant to be: a file system that loses or
            # changes bytes must not leave a file that later runs would trust.
            if _cached_code(Path(temporary).read_bytes(), path.stem) != code:
                raise OSError(f"{temporary} read back differs from what was written")
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        warnings.warn(f"autotrace could not cache a compiled kernel in {path.parent} ({error}); "
                      f"it compiles again in the next process. Set AUTOTRACE_CACHE_DIR to a "
                      f"writable directory to keep them", RuntimeWarning, stacklevel=3)


_MXCSR_IR = """
declare void @llvm.x86.sse.stmxcsr(ptr)
define i32 @autotrace_read_mxcsr() {
  %slot = alloca i32, align 4
  call void @llvm.x86.sse.stmxcsr(ptr %slot)
  %value = load i32, ptr %slot, align 4
  ret i32 %value
}
"""


@functools.cache
def _mxcsr_reader():
    address = compile_module(_MXCSR_IR, ["autotrace_read_mxcsr"])["autotrace_read_mxcsr"]
    return ctypes.CFUNCTYPE(ctypes.c_uint32)(address)


def floating_point_control() -> int | None:
    """The x86 MXCSR register of this thread (bit 15 flush-to-zero, bit 6 denormals-are-zero,
    bits 13-14 rounding), or None on another architecture: kernels must leave it unchanged."""
    if not has_mxcsr():
        return None
    return _mxcsr_reader()()
