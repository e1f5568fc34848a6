"""Objects in trace keys by identity (runtime/tracing/signature.py): held weakly where they can
be, so that a key does not keep its objects alive, and a cache can drop a key whose object
died."""
from __future__ import annotations

import weakref


class WeakIdentity:
    """An object in a key, by identity, without keeping it alive."""

    __slots__ = ("ref", "ident", "type_name")

    def __init__(self, value, callback=None):
        self.ref = weakref.ref(value, callback)
        self.ident = id(value)
        self.type_name = type(value).__name__

    def __hash__(self) -> int:
        return self.ident

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(other) is not WeakIdentity or self.ident != other.ident:
            return False
        value = self.ref()
        return value is not None and value is other.ref()

    @property
    def alive(self) -> bool:
        return self.ref() is not None

    def __repr__(self) -> str:
        return f"<{self.type_name} object at {self.ident:#x}>"


class StrongIdentity:
    """An object that cannot be weakly referenced, by identity, kept alive by the key."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other) -> bool:
        return type(other) is StrongIdentity and other.value is self.value

    def __repr__(self) -> str:
        return f"<{type(self.value).__name__} object at {id(self.value):#x}>"


def identity_key(value):
    """`value` in a key by identity: weakly where it can be, else strongly."""
    try:
        return WeakIdentity(value)
    except TypeError:
        return StrongIdentity(value)


def with_release_hook(key, hook):
    """`key` with each WeakIdentity rebuilt so that `hook(weakref)` runs when its object dies.

    A lookup key needs no hook (and is cheaper without); the key a cache stores does.
    """
    if type(key) is WeakIdentity:
        value = key.ref()
        return WeakIdentity(value, hook) if value is not None else key
    if type(key) is tuple:
        return tuple(with_release_hook(item, hook) for item in key)
    return key


def is_alive(key) -> bool:
    """False if an object the key holds weakly has died: the key can never match again."""
    if type(key) is WeakIdentity:
        return key.alive
    if type(key) is tuple:
        return all(is_alive(item) for item in key)
    return True
