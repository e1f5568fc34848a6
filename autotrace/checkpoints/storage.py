"""The files of a checkpoint, written atomically and read back verified.

A checkpoint saved at path `<prefix>-<N>` is two files, and its directory has a third:

    <prefix>-<N>.npz          the arrays, one `<name>.npy` member each (NumPy's npz format,
                              readable with np.load(..., allow_pickle=False))
    <prefix>-<N>.index.json   for each name its shape, dtype and the sha256 of its bytes, the
                              save counter N and the name of its data file; written after the
                              arrays
    checkpoint                the latest checkpoint and every one saved there (JSON; paths
                              relative to the directory)

Every file is written to a temporary file in the same directory, flushed to disk, then renamed
over its final name (os.replace, atomic on POSIX and Windows), so a crash while saving leaves
the files of earlier checkpoints as they were. The index goes last, and it is what makes a
checkpoint: a data file without an index, or with an index of an earlier save, is never taken
for a checkpoint (its checksums would not match). A save that replaces a checkpoint `<prefix>-<N>`
(training on after restoring an earlier one) writes its arrays beside the ones the index in place
names, to `<prefix>-<N>.b.npz` where that index names `<prefix>-<N>.npz` and the other way round,
and removes the old data file only after the new index has replaced the old: at every moment
the index names data that matches it, so a save killed or failing at any point leaves
`<prefix>-<N>` restorable, with the values it had before or with the new ones. The state file is
written last of all, in the same way. A temporary file is named `.<final name>.<12 hex
digits>.tmp`; those a killed save left behind are removed by the next save of the same prefix
(`remove_temporaries`).

Reading trusts nothing in the files: the names in the state file must be files of its own
directory (no path, no symlink out of it), an index may name only the two data files of its own
checkpoint, and an array's header must not claim more bytes than the whole data file holds
(checked before anything is allocated).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import secrets
import zipfile
import zlib

import numpy as np

DATA_SUFFIX = ".npz"
# The data file of a save that replaced a checkpoint whose index named `<path>.npz` (and the
# other way round: a checkpoint's data alternates between the two names as it is replaced).
REPLACING_DATA_SUFFIX = ".b.npz"
INDEX_SUFFIX = ".index.json"
STATE_FILE = "checkpoint"
FORMAT = "autotrace-checkpoint"
VERSION = 1

# What reading a damaged npz member can raise (zipfile, zlib, NumPy's header parser).
_CORRUPT_DATA_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError)


class CheckpointError(ValueError):
    """A checkpoint that cannot be restored: missing or damaged files, or values that do not
    fit the variables (the message names the variable and the file)."""


def checksum(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


# --- writing ------------------------------------------------------------------------------------

def write_atomically(path: str, write) -> None:
    """Make the file `path` hold what `write(binary_file)` writes, or leave it as it was."""
    directory = os.path.dirname(path) or "."
    # Beside the target (os.replace cannot cross file systems); opened with "x" rather than by
    # tempfile.mkstemp so that the file gets the usual permissions (0666 less the umask).
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}"
                                        f"{_TEMPORARY_SUFFIX}")
    file = open(temporary, "xb")
    try:
        with file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    _sync_directory(directory)


_TEMPORARY_SUFFIX = ".tmp"


def remove_temporaries(file_prefix: str) -> None:
    """Remove the temporary files that saves of `<file_prefix>-<N>` left when they were killed
    midway (a save that fails by an exception removes its own). Only names that
    `write_atomically` makes for this prefix's data and index files, and for the state file of
    their directory, are touched."""
    directory = os.path.dirname(file_prefix) or "."
    suffixes = "|".join(re.escape(suffix) for suffix in
                        (DATA_SUFFIX, REPLACING_DATA_SUFFIX, INDEX_SUFFIX))
    final_name = (rf"{re.escape(os.path.basename(file_prefix))}-[0-9]+(?:{suffixes})|"
                  rf"{re.escape(STATE_FILE)}")
    temporary = re.compile(rf"\.(?:{final_name})\.[0-9a-f]{{12}}{re.escape(_TEMPORARY_SUFFIX)}")
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    for name in names:
        if temporary.fullmatch(name):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(directory, name))


def remove_checkpoint(path: str) -> None:
    """Remove the files of checkpoint `path`, its index first (so that what is left of a
    removal cut short is never taken for a checkpoint)."""
    for suffix in (INDEX_SUFFIX, DATA_SUFFIX, REPLACING_DATA_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def _sync_directory(directory: str) -> None:
    """Make the rename itself durable (where the platform lets a directory be synced)."""
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _write_npz(file, arrays: dict) -> None:
    # np.savez(file, **arrays) would take a name "file" or "allow_pickle" as its own argument.
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(array), allow_pickle=False)


def write_checkpoint(path: str, arrays: dict, save_counter: int) -> None:
    """Write `arrays` ({name: array}) as the checkpoint `path`: the data first, beside the data
    of a checkpoint already at `path`, then the index, whose rename switches to the new data."""
    try:
        replaced = data_file_of(path, read_index(path))
    except CheckpointError:
        replaced = None  # no checkpoint at `path` that restores: nothing there to keep
    data = path + (REPLACING_DATA_SUFFIX if replaced == path + DATA_SUFFIX else DATA_SUFFIX)
    write_atomically(data, lambda file: _write_npz(file, arrays))
    index = {
        "format": FORMAT, "version": VERSION, "save_counter": save_counter,
        "data": os.path.basename(data),
        "variables": {name: {"shape": list(array.shape), "dtype": str(array.dtype),
                             "sha256": checksum(array)} for name, array in arrays.items()},
    }
    text = json.dumps(index, indent=1) + "\n"
    write_atomically(path + INDEX_SUFFIX, lambda file: file.write(text.encode()))
    if replaced is not None and replaced != data:
        # No index names it any more; where a kill comes first, the next save of `path`
        # writes over it (or remove_checkpoint removes it).
        with contextlib.suppress(FileNotFoundError):
            os.remove(replaced)


def record_latest(path: str) -> None:
    """Name `path` the latest checkpoint in the state file of its directory."""
    directory = os.path.dirname(path) or "."
    try:
        state = read_state(directory)
    except CheckpointError:
        state = None  # a damaged state file: this save starts it again
    paths = state["all"] if state else []
    name = os.path.basename(path)
    write_state(directory, name, [other for other in paths if other != name] + [name])


def write_state(directory: str, latest: str, names: list) -> None:
    """Write the state file of `directory`: checkpoint `latest` is the newest, `names` all the
    checkpoints kept there (file names in the directory, oldest first)."""
    text = json.dumps({"latest": latest, "all": list(names)}, indent=1) + "\n"
    write_atomically(os.path.join(directory, STATE_FILE), lambda file: file.write(text.encode()))


# --- reading ------------------------------------------------------------------------------------

def read_state(directory: str) -> dict | None:
    """The state file of `directory` ({"latest": name, "all": [names]}), or None if none."""
    state_path = os.path.join(directory, STATE_FILE)
    try:
        with open(state_path, "rb") as file:
            state = json.loads(file.read())
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError) as error:
        raise CheckpointError(
            f"{state_path} is not a valid checkpoint state file: {error}") from None
    except RecursionError:
        raise CheckpointError(f"{state_path} is not a valid checkpoint state file: "
                              f"{_TOO_DEEP}") from None
    if not (isinstance(state, dict) and isinstance(state.get("latest"), str) and
            isinstance(state.get("all"), list)):
        raise CheckpointError(f"{state_path} is not a valid checkpoint state file: it needs "
                              "'latest' (a name) and 'all' (a list of names)")
    for name in [state["latest"], *state["all"]]:
        if not _is_file_name(name):
            raise CheckpointError(
                f"{state_path} is not a valid checkpoint state file: it names {name!r}, which "
                "is not the name of a checkpoint in its directory (the state file holds names "
                "alone, no paths)")
    return state


def _is_file_name(name) -> bool:
    separators = {os.sep, os.altsep, "/", "\\"} - {None}
    return (isinstance(name, str) and name not in ("", ".", "..") and "\0" not in name and
            not any(separator in name for separator in separators))


def checkpoint_in(directory: str, name: str) -> str | None:
    """The path of checkpoint `name` (from the state file of `directory`), or None if its
    index does not exist. Raises CheckpointError if one of its files is a link that leads out
    of the directory: a state file is no licence to read files elsewhere."""
    path = os.path.join(directory, name)
    if not os.path.exists(path + INDEX_SUFFIX):
        return None
    inside = os.path.realpath(directory)
    for file_path in (path + INDEX_SUFFIX, path + DATA_SUFFIX, path + REPLACING_DATA_SUFFIX):
        if os.path.dirname(os.path.realpath(file_path)) != inside:
            raise CheckpointError(
                f"{file_path} leads out of {directory} (to {os.path.realpath(file_path)}); "
                "autotrace reads only checkpoints in the directory of their state file")
    return path


def read_index(path: str) -> dict:
    """The index of checkpoint `path`, checked for the fields restoring needs."""
    index_path = path + INDEX_SUFFIX
    try:
        with open(index_path, "rb") as file:
            index = json.loads(file.read())
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path}: {index_path} does not exist") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{index_path} is not valid JSON ({error})") from None
    except RecursionError:
        raise CheckpointError(f"{index_path} is not a checkpoint index: {_TOO_DEEP}") from None
    problem = _index_problem(index, os.path.basename(path))
    if problem:
        raise CheckpointError(f"{index_path} is not a checkpoint index: {problem}")
    return index


# Python's json parser recurses once a level: an index of 1,000 nested lists is damage (or
# malice), and must say so like any other damage rather than escape as RecursionError.
_TOO_DEEP = "its JSON is nested too deeply to be read"


def _index_problem(index, name: str) -> str:
    """What is wrong with `index`, the index of checkpoint `name`, or "" if nothing."""
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        return f"its 'format' is not {FORMAT!r}"
    if index.get("version") != VERSION:
        return f"version {index.get('version')!r}; this autotrace reads version {VERSION}"
    counter = index.get("save_counter")
    if isinstance(counter, bool) or not isinstance(counter, int):
        return "it has no integer 'save_counter'"
    if counter < 0:
        return f"its 'save_counter' is {counter}, but a count of saves is never negative"
    data_names = (name + DATA_SUFFIX, name + REPLACING_DATA_SUFFIX)
    if index.get("data", data_names[0]) not in data_names:
        return (f"its 'data' is {index['data']!r}; the data of {name} is {data_names[0]!r} or "
                f"{data_names[1]!r}")
    variables = index.get("variables")
    if not isinstance(variables, dict):
        return "it has no 'variables' table"
    for name, entry in variables.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("shape"), list) and
                isinstance(entry.get("dtype"), str) and isinstance(entry.get("sha256"), str)):
            return f"the entry of {name!r} needs 'shape', 'dtype' and 'sha256'"
    return ""


def data_file_of(path: str, index: dict) -> str:
    """The path of the data file that `index`, the index of checkpoint `path`, names (the
    indexes of earlier autotrace name none: theirs is `<path>.npz`)."""
    return os.path.join(os.path.dirname(path),
                        index.get("data", os.path.basename(path) + DATA_SUFFIX))


def read_checkpoint(path: str) -> tuple[dict, int]:
    """The arrays of checkpoint `path` ({name: array}, in the order saved) and its save
    counter, each array checked against its index entry (shape, dtype, sha256)."""
    index = read_index(path)
    index_path = path + INDEX_SUFFIX
    data_path = data_file_of(path, index)
    try:
        archive = np.load(data_path, allow_pickle=False)
    except FileNotFoundError:
        raise CheckpointError(f"{data_path} does not exist (the data of checkpoint {path}, "
                              f"indexed by {index_path})") from None
    except _CORRUPT_DATA_ERRORS as error:
        raise CheckpointError(f"{data_path} is not a readable npz file ({error})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise CheckpointError(f"{data_path} is not a readable npz file (it holds a single "
                              "array, not named arrays)")
    arrays = {}
    with archive:
        members = set(archive.zip.namelist())
        for name, entry in index["variables"].items():
            if name + ".npy" not in members:
                raise CheckpointError(f"{name!r} is listed in {index_path} but missing from "
                                      f"{data_path}")
            try:
                # NumPy allocates what the header claims before reading: a damaged or hostile
                # header would ask for terabytes (MemoryError, or the machine's memory spent).
                claimed, file_size = _claimed_bytes(archive, name), os.path.getsize(data_path)
                if claimed <= file_size:
                    # By the member's own name: archive[name] reads the member `name` itself
                    # where there is one (the value of "x" for a variable named "x.npy").
                    with archive.zip.open(name + ".npy") as member:
                        array = np.lib.format.read_array(member, allow_pickle=False)
            except _CORRUPT_DATA_ERRORS as error:
                raise CheckpointError(f"{name!r} in {data_path} is corrupt ({error})") from None
            if claimed > file_size:
                raise CheckpointError(
                    f"{name!r} in {data_path} is corrupt: its header claims {claimed} bytes of "
                    f"data, more than the whole file holds ({file_size} bytes)")
            if (list(array.shape) != entry["shape"] or str(array.dtype) != entry["dtype"] or
                    checksum(array) != entry["sha256"]):
                raise CheckpointError(f"{name!r} in {data_path} is corrupt: it does not match "
                                      f"its shape, dtype and checksum in {index_path}")
            arrays[name] = array
    return arrays, index["save_counter"]


def _claimed_bytes(archive, name: str) -> int:
    """How many bytes the header of array `name` says its data has."""
    with archive.zip.open(name + ".npy") as member:
        version = np.lib.format.read_magic(member)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0) else
                       np.lib.format.read_array_header_2_0)
        shape, _, dtype = read_header(member)
    return math.prod(shape) * dtype.itemsize
