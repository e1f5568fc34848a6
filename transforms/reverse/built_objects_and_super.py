"""Objects in differentiated code: objects the function builds, and methods that call `super()`.

An object built in differentiated code carries gradient through its attributes. The call
`P(a, b)` of a user's class becomes

    build_object(P, fields_of_P(a, b))

where `fields_of_P(a, b)` runs `P.__init__` on a new object and returns the attributes it set,
as a dict, and `build_object` hands back that object (runtime/derivatives/objects.py): to the
gradient, the object is the dict of its attributes. To differentiate `fields_of_P`, autotrace reads
`P.__init__` as a function that builds that dict:

    def __init__(self, w):                 def __init__(w):
        self.w = w * 2.0          ->           self = {}
        self.n = self.w.size                   self['w'] = w * 2.0
                                               self['n'] = self['w'].size
                                               return self

so its attributes are differentiated as the items of a local dict are; `super().__init__(...)`
becomes the items of the base class's fields function. A dataclass whose `__init__` the
dataclass decorator wrote becomes `build_object(D, {'w': a, 'b': b})`.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import weakref

import gast

from ..codegen.visitors import NodeTransformer
from ..codegen.nodes import copy_tree
from ...runtime.derivatives.built_objects import build_object, replaced_dataclass
from ...runtime.derivatives.items import build_namedtuple
from ...runtime.derivatives.objects import generated_dataclass_init
from ..analysis.calls import FieldsOf
from ..codegen.codegen import load_function
from ..front.parsing import parse_function, resolve
from ..codegen.templates import name
from ..front.itertools_loops import WRITTEN_OUT
from ..front.varargs import calls_written_out
from ..codegen.nodes import walk

# Packages whose classes are built as they are (their fields hold no gradient, or they hold
# Variables, which implicit_grad reaches through their attributes).
_LIBRARY_PACKAGES = {"numpy", "cupy", "autotrace", "builtins"}


# What is made for a class of a kind (an attribute name) where the class takes no attributes
# of ours: kind -> a weakly keyed table (a class without a __dict__ of its own lives as long as
# its module in any case).
_made_elsewhere: dict = {}


def _made_for(cls, kind: str, make):
    """`make(cls)`, made once: kept on the class itself, so that it goes with the class (a
    weakly keyed table would keep it alive, what was made referring back to its key), as
    function_caches.made_from keeps what is made from a function."""
    made = cls.__dict__.get(kind)  # its own: a subclass's is not its base class's
    if made is not None:
        return made
    elsewhere = _made_elsewhere.setdefault(kind, weakref.WeakKeyDictionary())
    made = elsewhere.get(cls)
    if made is None:
        made = make(cls)
        try:
            setattr(cls, kind, made)
        except (AttributeError, TypeError):  # a class that refuses new attributes
            elsewhere[cls] = made
    return made


def fields_of(cls) -> FieldsOf:
    """The one FieldsOf of `cls` (so that its derivative is made once)."""
    return _made_for(cls, "__autotrace_fields_of__", FieldsOf)


def objects_built(function: gast.FunctionDef, namespace: dict, import_value) -> None:
    """Write each call of a user's class in `function` as `build_object(...)` (see the module
    docstring). import_value(hint, value): the name generated code reads `value` by."""
    # (A with's context manager, transforms/front/context_managers.py, is called as written.)
    headers = {id(item.context_expr) for node in walk(function)
               if isinstance(node, gast.With) for item in node.items}
    for node in calls_written_out(function):
        cls = resolve(node.func, namespace)
        if not _builds_by_fields(cls) or id(node) in headers:
            continue
        if generated_dataclass_init(cls):
            fields = _dataclass_arguments(cls, node)
            if fields is None:
                continue  # a call Python would refuse: left to raise as it does
        else:
            fields = gast.Call(func=name(import_value(f"fields_of_{cls.__name__}",
                                                      fields_of(cls))),
                               args=node.args, keywords=node.keywords)
        node.args = [node.func, fields]
        node.keywords = []
        node.func = name(import_value("build_object", build_object))


def replace_calls(function: gast.FunctionDef, namespace: dict, import_value) -> None:
    """Write each call `dataclasses.replace(p, w=v)` in `function` as
    `replaced_dataclass(p, {'w': v})`, which autotrace differentiates (Python's own passes a
    dict it changes on as `**changes`; see runtime/derivatives/built_objects.py).
    import_value(hint, value): the name generated code reads `value` by."""
    for node in calls_written_out(function):
        if resolve(node.func, namespace) is not dataclasses.replace or len(node.args) != 1:
            continue  # (another number of positional arguments: Python refuses it)
        changes = gast.Dict(keys=[gast.Constant(value=k.arg, kind=None) for k in node.keywords],
                            values=[k.value for k in node.keywords])
        node.func = name(import_value("replaced_dataclass", replaced_dataclass))
        node.args = [node.args[0], changes]
        node.keywords = []


def check_constructions(body: list, namespace: dict, location, activity, is_constant) -> None:
    """Refuse, at its line, a call that builds an object autotrace cannot build from its
    fields (see `unsupported_construction`) from values that carry gradient to the result.
    activity(is_constant): the active names, given which calls are constants."""
    refused = {}
    for statement in body:
        for node in walk(statement):
            if isinstance(node, gast.Call):
                reason = unsupported_construction(resolve(node.func, namespace))
                if reason is not None:
                    refused[id(node)] = (node, reason)
    if not refused:
        return
    # Active names as if the object passed gradient from its arguments to its attributes.
    active = activity(lambda call: id(call) not in refused and is_constant(call))
    for node, reason in refused.values():
        arguments = node.args + [k.value for k in node.keywords]
        if any(isinstance(a, gast.Name) and a.id in active for a in arguments):
            name_of_class = resolve(node.func, namespace).__name__
            raise location.error(
                node, f"autotrace cannot differentiate building a {name_of_class} from values "
                f"that carry gradient: {reason}", name_of_class)


def unsupported_construction(cls) -> str | None:
    """Why the gradient cannot pass through building an object of class `cls`, or None:
    where it can, and for classes with rules or their own errors (builtins, NumPy's,
    functools.partial) or whose objects hand gradients to the Variables they hold
    (autotrace's)."""
    if not isinstance(cls, type) or cls is functools.partial or cls.__module__ == "builtins" \
            or issubclass(cls, (int, float, complex, bool)) \
            or issubclass(cls, tuple) and hasattr(cls, "_fields") \
            or _of_library(cls, _LIBRARY_PACKAGES - {"builtins"}):
        return None
    container = next((base for base in (list, tuple, dict, set, frozenset, bytearray)
                      if issubclass(cls, base)), None)
    if container is not None and _package(cls) not in sys.stdlib_module_names:
        return f"it derives from {container.__name__}, and autotrace differentiates building " \
               f"a {container.__name__} itself, not a class derived from one (whose methods " \
               f"may read its items otherwise); build a {container.__name__}, or a class of " \
               f"your own whose __init__ stores the values as attributes"
    if cls in WRITTEN_OUT:
        return f"autotrace differentiates {cls.__name__}(...) read whole where it is " \
               f"made: as a for loop's iterable, or in list(...); write " \
               f"list({cls.__name__}(...)) and keep the list"
    if cls.__module__ == "itertools":
        return f"autotrace has no derivative rule for itertools.{cls.__name__}; write the " \
               f"loop it stands for over the items (a for loop, with an if where it picks)"
    if _library_class(cls):
        return "autotrace has no derivative rule for building it (a class of the standard " \
               "library, or with its __init__); use a dict, or a class of your own"
    if _builds_by_fields(cls):
        return None
    if generated_dataclass_init(cls) and hasattr(cls, "__post_init__"):
        return "autotrace does not differentiate __post_init__; write an __init__ that " \
               "computes the fields instead"
    if cls.__new__ is not object.__new__ or type(cls).__call__ is not type.__call__:
        return "it defines __new__ or a metaclass __call__"
    if cls.__init__ is object.__init__:
        return "it has no __init__ of its own that could store the values"
    if not cls.__dictoffset__:
        return "its instances keep their attributes in __slots__"
    return "its __init__ is not a Python function"


def _library_class(cls) -> bool:
    """A class of NumPy's or autotrace's, or derived from one; a class of the standard
    library's (functools.partial has its own handling), or one whose __init__ is: not the
    user's. (A user's class derived from abc.ABC is the user's.)"""
    if _of_library(cls):
        return True
    initializer = next((c for c in cls.__mro__ if "__init__" in c.__dict__), object)
    return _package(cls) in sys.stdlib_module_names or (
        initializer is not object and _package(initializer) in sys.stdlib_module_names)


def _of_library(cls, packages=_LIBRARY_PACKAGES) -> bool:
    """A class of NumPy's or autotrace's (or of Python's builtins, of another of `packages`),
    or derived from one, but for those of autotrace's that ask to be differentiated as a
    user's (autotrace.vjp's VJPFunction)."""
    return any(_package(base) in packages for base in cls.__mro__[:-1]) and not \
        cls.__dict__.get("__autotrace_differentiable__", False)


def _package(cls) -> str:
    return (getattr(cls, "__module__", None) or "").split(".")[0]


def as_function(func):
    """What vjp_call and jvp_call differentiate for a call of `func` made through a variable
    (`make(x)`, `make` an argument, a namedtuple class made in the function): for a class of
    the user's, a function that builds it as differentiated code does (`build_object(cls,
    fields_of_cls(...))`, `build_namedtuple(cls, (...))`), made once per class; anything
    else, itself."""
    if _namedtuple_class(func):
        return _made_for(func, "__autotrace_class_caller__", _namedtuple_caller)
    if not _builds_by_fields(func):
        return func
    return _made_for(func, "__autotrace_class_caller__", lambda cls: (
        _dataclass_caller(cls) if generated_dataclass_init(cls) else _fields_caller(cls)))


def _fields_caller(cls):
    fields = fields_of(cls)

    def call(*args, **kwargs):
        return build_object(cls, fields(*args, **kwargs))
    return call


def _dataclass_caller(cls):
    """`def make(w, b=<default>): return build_object(cls, {'w': w, 'b': b})`, for a
    dataclass whose `__init__` the decorator wrote (it has no source to read)."""
    namespace = {"build_object": build_object, "cls": cls, "_unset": object()}
    factories = {f.name: f.default_factory for f in dataclasses.fields(cls)
                 if f.default_factory is not dataclasses.MISSING}
    parameters, values = [], []
    for position, parameter in enumerate(inspect.signature(cls).parameters.values()):
        name_ = parameter.name
        values.append(f"{name_!r}: {name_}")
        if name_ in factories:  # a new default value on each call
            namespace[f"_factory{position}"] = factories[name_]
            parameters.append(f"{name_}=_unset")
            values[-1] = f"{name_!r}: _factory{position}() if {name_} is _unset else {name_}"
        elif parameter.default is inspect.Parameter.empty:
            parameters.append(name_)
        else:
            namespace[f"_default{position}"] = parameter.default
            parameters.append(f"{name_}=_default{position}")
    source = (f"def make_{cls.__name__}({', '.join(parameters)}):\n"
              f"    return build_object(cls, {{{', '.join(values)}}})\n")
    return load_function(source, f"make_{cls.__name__}", namespace)


def _namedtuple_class(cls) -> bool:
    """A class of collections.namedtuple or typing.NamedTuple (or derived from one without a
    __new__ of its own): a call of it builds the tuple of its arguments."""
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        return False
    maker = next(c for c in cls.__mro__ if "__new__" in c.__dict__)
    return "_fields" in maker.__dict__


def _namedtuple_caller(cls):
    """`def make_P(a, b=<default>): return build_namedtuple(cls, (a, b))`, for a namedtuple
    class (its `__new__` has no source that autotrace reads as building it)."""
    namespace = {"build_namedtuple": build_namedtuple, "cls": cls}
    parameters = []
    for position, parameter in enumerate(inspect.signature(cls).parameters.values()):
        if parameter.default is inspect.Parameter.empty:
            parameters.append(parameter.name)
        else:
            namespace[f"_default{position}"] = parameter.default
            parameters.append(f"{parameter.name}=_default{position}")
    fields = "".join(f"{field}, " for field in cls._fields)
    source = (f"def make_{cls.__name__}({', '.join(parameters)}):\n"
              f"    return build_namedtuple(cls, ({fields}))\n")
    return load_function(source, f"make_{cls.__name__}", namespace)


def _builds_by_fields(cls) -> bool:
    """Whether a call of `cls` is written as build_object (see the module docstring)."""
    if not isinstance(cls, type) or _library_class(cls) or issubclass(cls, tuple):
        return False
    if cls.__new__ is not object.__new__ or type(cls).__call__ is not type.__call__:
        return False
    if not cls.__dictoffset__ and not dataclasses.is_dataclass(cls):
        return False
    if generated_dataclass_init(cls):
        return not hasattr(cls, "__post_init__")
    return inspect.isfunction(cls.__init__)


def _dataclass_arguments(cls, call):
    """The dict literal `{field: value}` a call of dataclass `cls` gives its fields, or None
    where Python would refuse the call."""
    init_fields = [f for f in dataclasses.fields(cls) if f.init]
    positional = [f.name for f in init_fields if not f.kw_only]
    if len(call.args) > len(positional):
        return None
    given = dict(zip(positional, call.args))
    for keyword in call.keywords:
        if keyword.arg in given or keyword.arg not in {f.name for f in init_fields}:
            return None
        given[keyword.arg] = keyword.value
    for field in init_fields:
        if field.name not in given and field.default is dataclasses.MISSING \
                and field.default_factory is dataclasses.MISSING:
            return None
    return gast.Dict(keys=[gast.Constant(value=k, kind=None) for k in given],
                     values=list(given.values()))


def parse_fields_function(fields: FieldsOf):
    """`fields.cls.__init__`, parsed and rewritten as the function that returns the dict of
    attributes it sets (see the module docstring)."""
    cls = fields.cls
    parsed = parse_function(cls.__init__)
    function, location = parsed.node, parsed.location
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    if not positional:
        raise location.error(function, f"{cls.__name__}.__init__ takes no self", "__init__")
    own = positional[0].id
    if arguments.posonlyargs:
        arguments.posonlyargs = arguments.posonlyargs[1:]
    else:
        arguments.args = arguments.args[1:]
    set_attributes = _attributes_stored(function, own)
    parsed.generated_names = {}  # bound in generated code's namespace (see front_end.bind)
    function.body = _base_init_as_items(function, own, cls, parsed.namespace, location,
                                        set_attributes, parsed.generated_names)
    class_name = _fresh(cls.__name__, parsed.namespace, parsed.generated_names, function)
    parsed.generated_names[class_name] = cls  # for the class attributes it reads
    rewrite = _AttributesAsItems(own, set_attributes, cls, class_name, location)
    function.body = [rewrite.visit(statement) for statement in function.body]
    start = gast.Assign(targets=[name(own, store=True)], value=gast.Dict(keys=[], values=[]),
                        type_comment=None)
    end = gast.Return(value=name(own))
    gast.copy_location(start, function.body[0])
    gast.copy_location(end, function.body[-1])
    function.body = [start] + function.body + [end]
    parsed.node = function
    return parsed


def _attributes_stored(function: gast.FunctionDef, own: str) -> set:
    return {node.attr for node in walk(function)
            if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store)
            and isinstance(node.value, gast.Name) and node.value.id == own}


_NOTHING = object()

# Marks the nodes that name the dict being built where _AttributesAsItems lets them be.
_MERGE = "_autotrace_fields_merge"


def _base_init_as_items(function, own: str, cls, namespace: dict, location,
                        set_attributes: set, generated_names: dict) -> list:
    """`function.body` with each `super().__init__(...)` statement as the items the base
    class's __init__ sets, read from the dict its own fields function returns:

        _base_fields = fields_of_Base(...)
        if 'w' in _base_fields:
            self['w'] = _base_fields['w']

    (dropped where the __init__ reached is object's, which sets nothing). `set_attributes`
    gains the base's attributes; `generated_names` the names the statements read."""
    kept = []
    for statement in function.body:
        call = statement.value if isinstance(statement, gast.Expr) else None
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "__init__" and isinstance(call.func.value, gast.Call)
                and isinstance(call.func.value.func, gast.Name)
                and call.func.value.func.id == "super" and not call.func.value.args):
            kept.append(statement)
            continue
        owner = namespace.get("__class__", cls)
        following = cls.__mro__[cls.__mro__.index(owner) + 1:]
        base = next(c for c in following if "__init__" in c.__dict__)
        if base is object:
            if call.args or call.keywords:
                kept.append(statement)  # object.__init__ refuses arguments: let it raise
            continue
        if not _builds_by_fields(base) or generated_dataclass_init(base) \
                or cls.__mro__[cls.__mro__.index(base):] != base.__mro__:
            raise location.error(
                statement, f"autotrace cannot differentiate building a {cls.__name__} here: "
                f"it calls the __init__ of {base.__name__}, which autotrace cannot read as "
                "the attributes it sets (no Python source, or a class hierarchy where super() "
                "depends on the class built); set them in this __init__ instead",
                "super().__init__")
        identifier = _fresh(f"fields_of_{base.__name__}", namespace, generated_names,
                            function)
        generated_names[identifier] = fields_of(base)
        merged = _fresh("_base_fields", namespace, generated_names, function)
        attributes = _attributes_set_by(base)
        set_attributes |= attributes
        text = f"{merged} = {identifier}()\n" + "".join(
            f"if {key!r} in {merged}:\n    {own}[{key!r}] = {merged}[{key!r}]\n"
            for key in sorted(attributes))
        statements = gast.parse(text).body
        statements[0].value.args, statements[0].value.keywords = call.args, call.keywords
        for node in statements:
            for part in walk(node):
                gast.copy_location(part, statement)
                if isinstance(part, gast.Name) and part.id == own:
                    setattr(part, _MERGE, True)
        kept += statements
    return kept


def _fresh(hint: str, namespace: dict, generated_names: dict, function) -> str:
    taken = set(namespace) | set(generated_names) | {
        n.id for n in walk(function) if isinstance(n, gast.Name)}
    identifier = hint
    while identifier in taken:
        identifier += "_"
    generated_names.setdefault(identifier, None)
    return identifier


def _attributes_set_by(cls) -> set:
    """The attributes `cls.__init__` sets on self (through the __init__s of its bases too)."""
    parsed = parse_function(cls.__init__)
    positional = parsed.node.args.posonlyargs + parsed.node.args.args
    if not positional:
        return set()
    own = positional[0].id
    attributes = _attributes_stored(parsed.node, own)
    _base_init_as_items(parsed.node, own, cls, parsed.namespace, parsed.location, attributes,
                        {})  # (for the attributes the bases set)
    return attributes


class _AttributesAsItems(NodeTransformer):
    """`self.w` as `self['w']` in an __init__ read as a dict builder; a class attribute it
    reads (`self.scale`, never set here) as the class's (`Affine.scale`), a constant."""

    def __init__(self, own: str, set_attributes: set, cls, class_name: str, location):
        self.own, self.set_attributes, self.cls = own, set_attributes, cls
        self.class_name, self.location = class_name, location

    def visit_Attribute(self, node):
        if not (isinstance(node.value, gast.Name) and node.value.id == self.own):
            return self.generic_visit(node)
        if isinstance(node.ctx, gast.Load) and node.attr not in self.set_attributes:
            value = inspect.getattr_static(self.cls, node.attr, _NOTHING)
            if value is _NOTHING or hasattr(value, "__get__"):  # a method, a property
                raise self.refused(node, f"it reads {self.own}.{node.attr}, which this "
                                   "__init__ does not set (a method or property); compute "
                                   "the value here, or pass it in")
            return gast.copy_location(gast.Attribute(value=name(self.class_name),
                                                     attr=node.attr, ctx=gast.Load()), node)
        item = gast.Subscript(value=name(self.own), slice=gast.Constant(value=node.attr,
                                                                        kind=None),
                              ctx=copy_tree(node.ctx))
        return gast.copy_location(item, node)

    def visit_Name(self, node):
        if node.id == self.own and not getattr(node, _MERGE, False):
            raise self.refused(node, f"it uses {self.own} other than to set and read its "
                               f"attributes (it calls a method of {self.own}, or passes it "
                               "on); set and read attributes only, or build the object "
                               "outside the differentiated function")
        return node

    def visit_Call(self, node):
        if isinstance(node.func, gast.Name) and node.func.id == "super":
            raise self.refused(node, "it calls super()")
        return self.generic_visit(node)

    def refused(self, node, why: str):
        return self.location.error(
            node, f"autotrace cannot differentiate building a {self.cls.__name__} from "
            f"values that carry gradient: {why}", f"{self.cls.__name__}.__init__")


def explicit_super(function: gast.FunctionDef, namespace: dict) -> None:
    """`super()` becomes `super(__class__, self)`: Python finds the class and instance of a
    zero-argument `super()` through the method's `__class__` cell and its first parameter,
    and generated code, compiled outside the class body, has no such cell. The method's
    `__class__` is one of its closure values, so generated code can read it by name."""
    arguments = function.args.posonlyargs + function.args.args
    if "__class__" not in namespace or not arguments:
        return  # not a method Python compiled with a cell: super() fails as it would there
    for node in walk(function):
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == "super" and not node.args and not node.keywords):
            node.args = [name("__class__"), name(arguments[0].id)]
