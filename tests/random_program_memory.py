"""Statements of random programs (tests/random_programs.py) that share memory: aliases, views,
arrays held in lists and dicts, writes after another name was used, and names whose array a
condition on array values chooses.

Each statement starts from an array the function owns (made by it, shared with nothing) and
leaves the names that now share its memory out of the arrays later statements may write. A
name read after a write through another name is written rarely (feature
`alias_read_after_write`): autotrace refuses that write, naming both lines, in every mode.
"""
from __future__ import annotations

from tests.random_program_parts import SIZE, Scope

# The forms of a view of a whole array of shape (SIZE,), as users write them.
WHOLE_VIEWS = ("{}", "{}[:]", "{}[::-1]", "{}.reshape({size})", "np.ravel({})", "{}.T",
               "{}.reshape(2, 2).ravel()")


class MemoryWriter:
    """A mixin of the program writer (tests/random_programs.Writer): the memory statements."""

    def memory_kinds(self, scope: Scope) -> list:
        """The memory statements that may be written here (at the top level of f)."""
        if scope.nested or scope.returns_array or not self.writable(scope):
            return []
        kinds = []
        if self.has("views_written_after_use"):
            kinds += ["view_then_write", "view_then_write"]
        if self.has("partial_view_writes"):
            kinds += ["partial_view"]
        if self.has("container_items_written"):
            kinds += ["held_then_write"]
        if self.has("alias_chosen_by_condition"):
            kinds += ["chosen_alias"]
        if self.has("zero_d_arrays_written") and self.seed % 3 == 1:
            kinds += ["zero_d_written", "zero_d_written"]
        return kinds

    def writable(self, scope: Scope) -> list:
        """The owned arrays a memory statement may share and write: not the parameter x,
        which every result reads."""
        return sorted(name for name in scope.owned if name != "x")

    def write_memory(self, scope, depth):
        kind = self.rng.choice(self.memory_kinds(scope))
        getattr(self, "memory_" + kind)(scope)

    def view_of(self, name: str) -> str:
        form = self.rng.choice(WHOLE_VIEWS)
        return form.replace("{size}", str(SIZE)).format(name)

    def write_into(self, scope: Scope, name: str) -> None:
        """One write into the array `name` refers to, of a kind users write."""
        choice = self.rng.randrange(5)
        if choice == 0:
            self.emit(f"{name}[{self.rng.randint(-SIZE, SIZE - 1)}] = {self.scalar(scope, 2)}")
        elif choice == 1:
            operator = self.rng.choice(["+=", "*=", "-="])
            self.emit(f"{name}[{self.rng.randint(0, SIZE - 1)}] {operator} "
                      f"{self.scalar(scope, 2)}")
        elif choice == 2:
            start = self.rng.randint(0, SIZE - 2)
            self.emit(f"{name}[{start}:{start + 2}] = {self.array(scope, 2)[0]}[1:3]")
        elif choice == 3:
            self.emit(f"{name} {self.rng.choice(['+=', '*='])} {self.array(scope, 2)[0]}")
        else:
            self.emit(f"{name} *= {self.scalar(scope, 2)}")

    def read_of(self, scope: Scope, names: list) -> str:
        """A new array computed from `names` (each read once)."""
        terms = [f"np.tanh({name})" if self.chance(0.5) else f"{name} * {self.scalar(scope, 1)}"
                 for name in names]
        return " + ".join(terms)

    def forget(self, scope: Scope, *names: str) -> None:
        """`names` are no longer read or written by later statements."""
        for name in names:
            if name in scope.arrays:
                scope.arrays.remove(name)
            scope.owned.discard(name)

    def keep(self, scope: Scope, name: str, owned: bool) -> None:
        if name not in scope.arrays:
            scope.arrays.append(name)
        if owned:
            scope.owned.add(name)
        else:
            scope.owned.discard(name)

    def after_write(self, scope: Scope, written: str, other: str) -> None:
        """After a write through `written` into memory `other` shares: usually only the
        written name is read later; rarely both (which autotrace refuses)."""
        if self.has("alias_read_after_write") and self.chance(0.1):
            self.use("alias_read_after_write")
            used = self.new_name("v")
            self.emit(f"{used} = {self.read_of(scope, [written, other])}")
            self.keep(scope, used, owned=True)
            self.forget(scope, written, other)
            return
        self.forget(scope, other)
        self.keep(scope, written, owned=False)

    def memory_view_then_write(self, scope: Scope) -> None:
        """A view (or the same array under another name) read, then one of the two written:
        the read's derivative needs the values from before the write."""
        self.use("views_written_after_use")
        original = self.rng.choice(self.writable(scope))
        view, early = self.new_name("v"), self.new_name("v")
        self.emit(f"{view} = {self.view_of(original)}")
        self.emit(f"{early} = {self.read_of(scope, [view])}")
        self.keep(scope, early, owned=True)
        written, other = (original, view) if self.chance(0.5) else (view, original)
        self.write_into(scope, written)
        self.after_write(scope, written, other)

    def memory_partial_view(self, scope: Scope) -> None:
        """A write through a slice kept under a name of its own, into the array it views; the
        slice is read afterwards (the array itself only rarely: alias_read_after_write)."""
        self.use("partial_view_writes")
        original = self.rng.choice(self.writable(scope))
        part, early = self.new_name("p"), self.new_name("v")
        start = self.rng.randint(0, SIZE - 2)
        self.emit(f"{part} = {original}[{start}:{start + 2}]")
        if self.chance(0.5):
            self.emit(f"{early} = {original} * {self.scalar(scope, 1)}")
            self.keep(scope, early, owned=True)
        if self.chance(0.5):
            self.emit(f"{part} *= {self.scalar(scope, 2)}")
        else:
            self.emit(f"{part}[{self.rng.randint(0, 1)}] = {self.scalar(scope, 2)}")
        if self.has("alias_read_after_write") and self.chance(0.1):
            self.use("alias_read_after_write")
            self.keep(scope, original, owned=False)
        else:
            self.forget(scope, original)
        later = self.new_name("v")
        self.emit(f"{later} = np.concatenate([{part}, {part}[::-1]]) * {self.scalar(scope, 1)}")
        self.keep(scope, later, owned=True)

    def memory_held_then_write(self, scope: Scope) -> None:
        """An array held in a list or dict, read through the item, then written by its name
        or through the item."""
        self.use("container_items_written")
        original = self.rng.choice(self.writable(scope))
        other = self.array(scope, 1)[0]
        holder, early = self.new_name("items"), self.new_name("v")
        if self.chance(0.5):
            self.emit(f"{holder} = [{original}, {other}]")
            item = f"{holder}[0]"
        else:
            self.emit(f"{holder} = {{'w': {original}, 'b': {other}}}")
            item = f"{holder}['w']"
        self.emit(f"{early} = {self.read_of(scope, [item])}")
        self.keep(scope, early, owned=True)
        if self.chance(0.5):
            self.write_into(scope, original)
            self.keep(scope, original, owned=False)
        else:
            # through the item: into it, or `L[k] op= v`, the item's own in-place operator
            if self.chance(0.5):
                self.emit(f"{item}[{self.rng.randint(0, SIZE - 1)}] = {self.scalar(scope, 2)}")
            else:
                operator = self.rng.choice(["+=", "*=", "-="])
                self.emit(f"{item} {operator} {self.array(scope, 2)[0]}")
            later = self.new_name("v")
            if self.has("alias_read_after_write") and self.chance(0.1):
                self.use("alias_read_after_write")
                self.emit(f"{later} = {self.read_of(scope, [item, original])}")
            else:
                self.forget(scope, original)  # (its scalars read after would read it too)
                self.emit(f"{later} = {self.read_of(scope, [item])}")
            self.forget(scope, original)
            self.keep(scope, later, owned=True)

    def memory_chosen_alias(self, scope: Scope) -> None:
        """A name bound under a condition on array values to one array or another, read, then
        written through."""
        self.use("alias_chosen_by_condition")
        first = self.rng.choice(self.writable(scope))
        second = self.new_name("v")
        self.emit(f"{second} = {self.array(scope, 2)[0]} * 1.5")
        chosen, early = self.new_name("v"), self.new_name("v")
        condition = self.condition(scope)
        if self.chance(0.5):
            self.emit(f"{chosen} = {self.view_of(first)} if {condition} else {second}")
        else:
            self.emit(f"if {condition}:")
            self.emit(f"    {chosen} = {self.view_of(first)}")
            self.emit("else:")
            self.emit(f"    {chosen} = {self.view_of(second)}")
        self.emit(f"{early} = {self.read_of(scope, [chosen])}")
        self.keep(scope, early, owned=True)
        self.write_into(scope, chosen)
        self.forget(scope, first, second)
        self.keep(scope, chosen, owned=False)

    def memory_zero_d_written(self, scope: Scope) -> None:
        """A 0-d array (np.asarray of a number, or a view of one item of an array), read under
        another name, then changed in place through one of the two, which is read afterwards:
        `+=` changes a 0-d array in place, where it gives a NumPy scalar a new value."""
        self.use("zero_d_arrays_written")
        zero_d, other, early = self.new_name("z"), self.new_name("z"), self.new_name("s")
        if self.chance(0.6):
            maker = self.rng.choice(["np.asarray", "np.array", "np.copy"])
            # (of traced values: a NumPy array of constants cannot take traced ones in place)
            self.emit(f"{zero_d} = {maker}(np.mean(x) * {self.scalar(scope, 2)})")
        else:
            original = self.rng.choice(self.writable(scope))
            start = self.rng.randint(0, SIZE - 1)
            self.emit(f"{zero_d} = {original}[{start}:{start + 1}].reshape(())")
            self.forget(scope, original)
        form = self.rng.choice(["{}", "{}", "{}[...]", "{}.reshape(1)"])
        self.emit(f"{other} = {form.format(zero_d)}")
        self.emit(f"{early} = np.sum({other}) * {self.scalar(scope, 1)}")
        written, read = (zero_d, other) if self.chance(0.5) else (other, zero_d)
        self.emit(f"{written} {self.rng.choice(['+=', '-=', '*='])} {self.scalar(scope, 2)}")
        later = self.new_name("s")
        if self.has("alias_read_after_write") and self.chance(0.1):
            self.use("alias_read_after_write")
            self.emit(f"{later} = np.sum({written}) * np.sum({read})")
        else:
            self.emit(f"{later} = np.sum({written}) * {self.scalar(scope, 1)}")
        scope.scalars += [early, later]
