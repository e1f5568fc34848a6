"""A-normal form: every statement does one operation on names and constants.

    y = np.sum(x * w + b, axis=0)      becomes      _t1 = x * w
                                                    _t2 = _t1 + b
                                                    y = np.sum(_t2, axis=0)

Besides flattening expressions this pass makes the language the other passes see small:
- array methods become NumPy calls (`x.sum(axis=0)` -> `np.sum(x, axis=0)`, `x.T`, and
  `x.flat[i]` -> np.take of np.ravel(x)) where the receiver is an array, or a value passed in
  (checked when the code runs); a module's or an object's stay its own; where the source
  cannot tell, the generated code asks when it runs (transforms/front/method_receivers.py);
- an operator on an object of a class of the user's becomes the method call Python makes
  (`a + b` -> `a.__add__(b)`) where the source tells (transforms/front/object_operators.py);
- a ufunc's reduce becomes the NumPy reduction it is (`np.add.reduce(a)` -> `np.sum(a, axis=0)`,
  `np.maximum.reduce` -> `np.max`), whose rules apply;
- augmented assignment becomes plain assignment, tuple unpacking becomes subscripts;
- `a if c else b`, `and`/`or` and comprehensions become if statements and loops;
- every `for` loop counts over `range`: `for a, b in zip(A, B)` iterates an index and reads
  `A[i]`, `B[i]`, so gradients flow back into the sequences by the subscript rule;
- `while test:` evaluates its test into a name before the loop and at the end of the body;
- a call or display that unpacks a value (`f(*items, **options)`, `[a, *items]`) gets it as one
  tuple or dict, `apply_unpacked(f, (a,) + tuple(items), ...)` (transforms/front/star_arguments.py).
Atoms are names, constants, and attribute chains on modules (`np.pi`).
"""
from __future__ import annotations

import gast

from ..codegen.visitors import NodeTransformer
from ..errors import Location
from ..codegen.naming import Namer
from .parsing import resolve, static_chain
from ..reverse.name_scopes import scope_call, with_block
from ..codegen.templates import name
from .star_arguments import joined, keywords_value, unpacks
from ..codegen.nodes import copy_tree, walk
from .method_receivers import PACKED_METHODS, ArrayMethodCalls, ReceiverKinds
from .object_operators import ObjectClasses, ObjectOperators, method_class, surely_a_list
from ...runtime.ops import array_methods

# ndarray methods that are NumPy functions of the array: `x.sum(axis=0)` is `np.sum(x, axis=0)`.
ARRAY_METHODS = set(array_methods)
# Methods that become helpers of runtime.derivatives.structure: `x.copy()` copies a list or dict
# as one, where np.copy would make it an array.
HELPER_METHODS = {"astype": "astype", "item": "item", "copy": "shallow_copy"}
LIST_METHODS = {"append", "pop"}
_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.DictComp)


def _constant(value):
    return gast.Constant(value=value, kind=None)


class Normalizer(ArrayMethodCalls, ObjectOperators):
    """Rewrites a function body into A-normal form (see the module docstring)."""

    def __init__(self, location: Location, namer: Namer, namespace: dict, numpy_name: str,
                 helper_name):
        self.location = location
        self.namer = namer
        self.namespace = namespace
        self.numpy_name = numpy_name
        self.helper_name = helper_name  # helper_name("sequence") -> the name bound in namespace
        self.receivers = None  # which receivers of array methods hold arrays (ReceiverKinds)
        self.objects = None  # which operands are objects of the user's (ObjectClasses)
        self.out = None

    # ---- blocks and statements -------------------------------------------------------------

    def block(self, statements) -> list:
        saved, self.out = self.out, []
        try:
            for statement in statements:
                self.statement(statement)
            return self.out
        finally:
            self.out = saved

    def emit(self, statement, like=None):
        if like is not None:
            gast.copy_location(statement, like)
            for node in walk(statement):
                if getattr(node, "lineno", None) is None and hasattr(like, "lineno"):
                    node.lineno = like.lineno
                    node.col_offset = getattr(like, "col_offset", 0)
        self.out.append(statement)

    def statement(self, node):
        if getattr(node, "lineno", None) is None and getattr(self, "current", None) is not None:
            gast.copy_location(node, self.current)  # made here (`a if c else b`): its line
        self.current = node
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.location.error(node, f"autotrace cannot differentiate a "
                                      f"{type(node).__name__} statement",
                                      type(node).__name__)
        method(node)

    def visit_Assign(self, node):
        if len(node.targets) > 1:
            value = self.atom(node.value)
            for target in node.targets:
                self.assign(target, value, node)
            return
        self.assign(node.targets[0], node.value, node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.assign(node.target, node.value, node)

    def visit_AugAssign(self, node):
        target = node.target
        if isinstance(target, gast.Name):
            value = gast.BinOp(left=name(target.id), op=node.op, right=node.value)
            if not isinstance(node.value, gast.Constant):  # x = in_place_result(x + v, x):
                helper = name(self.helper_name("in_place_result"))  # (an array keeps its dtype)
                value = self.call(helper, [value, name(target.id)], [])
            return self.assign(name(target.id, store=True), value, node)
        base, index = self.subscript_parts(target)
        old = self.atom(gast.Subscript(value=base, slice=index, ctx=gast.Load()))
        new = self.atom(gast.BinOp(left=old, op=node.op, right=self.atom(node.value)))
        call = self.object_item_write(target, new)  # obj.__setitem__(i, new)
        self.emit(gast.Expr(value=call) if call is not None else gast.Assign(
            targets=[gast.Subscript(value=base, slice=index, ctx=gast.Store())], value=new,
            type_comment=None), node)

    def visit_Expr(self, node):
        value = node.value
        if isinstance(value, gast.Constant):
            return  # a docstring or a bare constant
        if isinstance(value, gast.Call):
            self.emit(gast.Expr(value=self.simple(value)), node)
        else:
            self.simple(value)

    def visit_If(self, node):
        test = self.atom(node.test)
        self.emit(gast.If(test=test, body=self.block(node.body) or [gast.Pass()],
                          orelse=self.block(node.orelse)), node)

    def visit_While(self, node):
        condition = self.namer.temporary("cond")
        self.assign(name(condition, store=True), node.test, node)
        body = self.block(node.body)
        recompute = self.block([gast.Assign(targets=[name(condition, store=True)],
                                            value=node.test, type_comment=None)])
        loop = gast.While(test=name(condition), body=body or [gast.Pass()], orelse=[])
        loop.recompute = recompute
        self.emit(loop, node)

    def visit_For(self, node):
        iterator = node.iter
        if self.is_call_to(iterator, range) and not iterator.keywords:
            bounds = gast.Call(func=name("range"), args=[self.atom(a) for a in iterator.args],
                               keywords=[])
            if isinstance(node.target, gast.Name):
                target, prologue = node.target.id, []
            else:
                target = self.namer.temporary("i")
                prologue = [gast.Assign(targets=[node.target], value=name(target),
                                        type_comment=None)]
        else:
            length, item = self.iteration(iterator)
            target = self.namer.temporary("i")
            bounds = gast.Call(func=name("range"), args=[length], keywords=[])
            prologue = [gast.Assign(targets=[node.target], value=item(name(target)),
                                    type_comment=None)]
        for statement in prologue:
            gast.copy_location(statement, node)
        body = self.block(prologue + node.body)
        self.emit(gast.For(target=name(target, store=True), iter=bounds, body=body,
                           orelse=[], type_comment=None), node)

    def visit_With(self, node):
        # A name scope (reverse/name_scopes.py): its name becomes an atom, computed before the
        # block, so the adjoint opens the same name again (another manager: in the header).
        scope = scope_call(node)
        call = self.atom(scope) if not isinstance(scope, gast.Call) else gast.Call(
            func=copy_tree(scope.func), args=[self.atom(a) for a in scope.args],
            keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value)) for k in scope.keywords])
        bound = copy_tree(node.items[0].optional_vars)
        self.emit(with_block(node, call, self.block(node.body), bound), node)

    def visit_Return(self, node):
        value = _constant(None) if node.value is None else self.atom(node.value)
        self.emit(gast.Return(value=value), node)

    def visit_Break(self, node):
        self.emit(gast.Break(), node)

    def visit_Continue(self, node):
        self.emit(gast.Continue(), node)

    def visit_Pass(self, node):
        pass

    def visit_Raise(self, node):
        self.emit(node)

    def visit_Assert(self, node):
        self.emit(node)

    # ---- assignment --------------------------------------------------------------------------

    def assign(self, target, value, like):
        if (isinstance(target, gast.Name) and isinstance(value, _COMPREHENSIONS)
                and target.id not in _reads(value)):
            # Built in its own name: through a temporary, `d = _dict1` would share the
            # temporary's dict, and a write `d[k] = v` would then be a write into it.
            getattr(self, "expr_" + type(value).__name__)(value, target.id)
            return
        if isinstance(target, gast.Name):
            rhs = value if self.is_atom(value) else self.appended(self.simple(value), like)
            if not isinstance(rhs, gast.Name) and target.id in _reads(rhs):
                # `x = x * 2` becomes `_t1 = x * 2; x = _t1`: the adjoint of the operation
                # then reads the old x, and the copy's adjoint hands the gradient over.
                temporary = self.namer.temporary("t")
                self.emit(gast.Assign(targets=[name(temporary, store=True)], value=rhs,
                                      type_comment=None), like)
                rhs = name(temporary)
            self.emit(gast.Assign(targets=[name(target.id, store=True)], value=rhs,
                                  type_comment=None), like)
        elif isinstance(target, (gast.Tuple, gast.List)):
            self.unpack(target, value, like)
        elif isinstance(target, gast.Subscript):
            call = self.object_item_write(target, value)  # obj.__setitem__(i, v)
            if call is not None:
                self.emit(gast.Expr(value=call), like)
                return
            base, index = self.subscript_parts(target)
            self.emit(gast.Assign(targets=[gast.Subscript(value=base, slice=index,
                                                          ctx=gast.Store())],
                                  value=self.atom(value), type_comment=None), like)
        else:
            raise self.location.error(like, "autotrace cannot assign to this target",
                                      type(target).__name__)

    def unpack(self, target, value, like):
        stored = {n.id for n in walk(target) if isinstance(n, gast.Name)}
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
            # `a, b = b, a`: evaluate every element before assigning any.
            items = []
            for element in value.elts:
                item = self.atom(element)
                if isinstance(item, gast.Name) and item.id in stored:
                    copy_name = self.namer.temporary("t")
                    self.emit(gast.Assign(targets=[name(copy_name, store=True)], value=item,
                                          type_comment=None), like)
                    item = name(copy_name)
                items.append(item)
        else:
            by_its_methods = self.iterated_by_its_methods(value)
            sequence = self.atom(value)
            if not isinstance(sequence, gast.Name):
                raise self.location.error(like, "cannot unpack a constant", "unpacking")
            if sequence.id in stored or by_its_methods:
                # (a dict or an object of the user's unpacks by its __iter__: what it gives)
                copy_name = self.namer.temporary("t")
                copied = gast.Call(func=name(self.helper_name("sequence")), args=[sequence],
                                   keywords=[]) if by_its_methods else sequence
                self.emit(gast.Assign(targets=[name(copy_name, store=True)], value=copied,
                                      type_comment=None), like)
                sequence = name(copy_name)
            items = [gast.Subscript(value=name(sequence.id), slice=_constant(i),
                                    ctx=gast.Load()) for i in range(len(target.elts))]
        for element, item in zip(target.elts, items):
            self.assign(element, item, like)

    def subscript_parts(self, target):
        if not isinstance(target.value, gast.Name):
            raise self.location.error(
                target, "autotrace can assign into `name[index]` only: into an array write "
                "x[i, j] = v rather than x[i][j] = v; into an item of a list or dict, change "
                "a copy of the item and store it back (item = d[k].copy(); item[j] = v; "
                "d[k] = item)", "subscript assignment")
        return name(target.value.id), self.index(target.slice)

    # ---- expressions ---------------------------------------------------------------------------

    def is_atom(self, node) -> bool:
        if isinstance(node, (gast.Name, gast.Constant)):
            return True
        if (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
                and isinstance(node.operand, gast.Constant)
                and isinstance(node.operand.value, (int, float))):
            return True  # a negative number: -1 stays -1
        return isinstance(node, gast.Attribute) and self.is_static(node)

    def is_static(self, node) -> bool:
        """An attribute chain rooted at a module (`np.pi`, `np.linalg.norm`) or class."""
        return isinstance(node, gast.Attribute) and static_chain(node, self.namespace)

    def is_flat(self, node) -> bool:
        """`x.flat` of a value `x` (not of a module)."""
        return isinstance(node, gast.Attribute) and node.attr == "flat" and \
            not self.is_static(node)

    def is_call_to(self, node, function) -> bool:
        return (isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute))
                and resolve(node.func, self.namespace) is function)

    def atom(self, node):
        """`node` as a name or constant, emitting the statements that compute it."""
        if self.is_atom(node):
            return node
        value = self.appended(self.simple(node), self.current)
        if self.is_atom(value):
            return value
        temporary = self.namer.temporary("t")
        self.emit(gast.Assign(targets=[name(temporary, store=True)], value=value,
                              type_comment=None), self.current)
        return name(temporary)

    def appended(self, value, like):
        """`items.append(v)` used as a value (`_ = ...`, in a comprehension), `items` a list
        the function builds, as the statement the transforms follow, and its value None; any
        other `value` as it is (an object's append may return something)."""
        if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                and value.func.attr == "append"
                and surely_a_list(self.objects.function, value.func.value, self.namespace)):
            return value
        self.emit(gast.Expr(value=value), like)
        return gast.Constant(value=None, kind=None)

    def simple(self, node):
        """`node` as one operation on atoms."""
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.location.error(self.current, "autotrace cannot differentiate a "
                                      f"{type(node).__name__} expression", type(node).__name__)
        return method(node)

    def expr_Name(self, node):
        return name(node.id)

    def expr_Constant(self, node):
        return node

    def expr_JoinedStr(self, node):
        return node  # f-strings: text, no gradient

    def expr_BinOp(self, node):
        return self.object_operation(node) or gast.BinOp(
            left=self.atom(node.left), op=node.op, right=self.atom(node.right))

    def expr_UnaryOp(self, node):
        return self.object_operation(node) or gast.UnaryOp(op=node.op,
                                                           operand=self.atom(node.operand))

    def expr_Compare(self, node):
        if len(node.ops) > 1:
            # `a < b < c` is `a < b and b < c` with b evaluated once: on arrays (traced ones
            # too) Python's chaining asks for the truth of `a < b`, which `and` tests.
            left, middle = self.atom(node.left), self.atom(node.comparators[0])
            first = gast.Compare(left=left, ops=node.ops[:1], comparators=[middle])
            rest = gast.Compare(left=middle, ops=node.ops[1:], comparators=node.comparators[1:])
            return self.expr_BoolOp(gast.BoolOp(op=gast.And(), values=[first, rest]))
        return gast.Compare(left=self.atom(node.left), ops=node.ops,
                            comparators=[self.atom(c) for c in node.comparators])

    def expr_BoolOp(self, node):
        # (named _and1, _or1: runtime/generated_source.py SHORT_CIRCUIT_NAME)
        result = self.namer.temporary("and" if isinstance(node.op, gast.And) else "or")
        self.assign(name(result, store=True), node.values[0], self.current)
        rest = node.values[1:]
        if rest:
            remaining = rest[0] if len(rest) == 1 else gast.BoolOp(op=node.op, values=rest)
            branch = self.block([gast.Assign(targets=[name(result, store=True)],
                                             value=remaining, type_comment=None)])
            if isinstance(node.op, gast.And):
                self.emit(gast.If(test=name(result), body=branch, orelse=[]), self.current)
            else:
                self.emit(gast.If(test=name(result), body=[gast.Pass()], orelse=branch),
                          self.current)
        return name(result)

    def expr_IfExp(self, node):
        test = self.atom(node.test)
        result = self.namer.temporary("t")
        body = self.block([gast.Assign(targets=[name(result, store=True)], value=node.body,
                                       type_comment=None)])
        orelse = self.block([gast.Assign(targets=[name(result, store=True)],
                                         value=node.orelse, type_comment=None)])
        self.emit(gast.If(test=test, body=body, orelse=orelse), self.current)
        return name(result)

    def expr_Attribute(self, node):
        if self.is_static(node):
            return node
        if node.attr in ("T", "real", "imag"):
            return self.array_attribute(node.value, node.attr)
        return gast.Attribute(value=self.atom(node.value), attr=node.attr, ctx=gast.Load())

    def expr_Subscript(self, node):
        item = self.object_item(node)  # obj[i] on an object of the user's: obj.__getitem__(i)
        if item is not None:
            return item
        if self.is_flat(node.value):
            items = self.flat_items(node.value.value, self.index(node.slice))
            if items is not None:
                return items
        return gast.Subscript(value=self.atom(node.value), slice=self.index(node.slice),
                              ctx=gast.Load())

    def index(self, node):
        if isinstance(node, gast.Slice):
            parts = [None if part is None else self.atom(part)
                     for part in (node.lower, node.upper, node.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in node.elts], ctx=gast.Load())
        return self.atom(node)

    def expr_Tuple(self, node):
        if any(isinstance(e, gast.Starred) for e in node.elts):  # (a, *items)
            return self.simple(joined(node.elts, "tuple"))
        return gast.Tuple(elts=[self.atom(e) for e in node.elts], ctx=gast.Load())

    def expr_List(self, node):
        if any(isinstance(e, gast.Starred) for e in node.elts):  # [a, *items]
            return self.simple(joined(node.elts, "list"))
        return gast.List(elts=[self.atom(e) for e in node.elts], ctx=gast.Load())

    def expr_Dict(self, node):
        if any(k is None for k in node.keys):
            raise self.location.error(self.current, "autotrace cannot differentiate {**d} in "
                                      "a dict literal", "dict unpacking")
        return gast.Dict(keys=[self.atom(k) for k in node.keys],
                         values=[self.atom(v) for v in node.values])

    def expr_ListComp(self, node, result=None):
        result = result or self.namer.temporary("list")
        self.emit(gast.Assign(targets=[name(result, store=True)],
                              value=gast.List(elts=[], ctx=gast.Load()), type_comment=None),
                  self.current)
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=name(result), attr="append", ctx=gast.Load()),
            args=[node.elt], keywords=[]))
        self.comprehension(node.generators, [append])
        return name(result)

    expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node, result=None):
        result = result or self.namer.temporary("dict")
        self.emit(gast.Assign(targets=[name(result, store=True)],
                              value=gast.Dict(keys=[], values=[]), type_comment=None),
                  self.current)
        store = gast.Assign(targets=[gast.Subscript(value=name(result), slice=node.key,
                                                    ctx=gast.Store())],
                            value=node.value, type_comment=None)
        self.comprehension(node.generators, [store])
        return name(result)

    def comprehension(self, generators, innermost):
        # The comprehension's own variables get fresh names: they must not clobber the
        # function's variables of the same name.
        renames = {}
        for generator in generators:
            for node in walk(generator.target):
                if isinstance(node, gast.Name):
                    renames[node.id] = self.namer.fresh(node.id)
        body = innermost
        for generator in reversed(generators):
            for condition in reversed(generator.ifs):
                body = [gast.If(test=condition, body=body, orelse=[])]
            body = [gast.For(target=generator.target, iter=generator.iter, body=body,
                             orelse=[], type_comment=None)]
        loop = body[0]
        _Rename(renames).visit(loop)
        self.receivers.renamed(renames)
        # The outermost iterable is evaluated in the enclosing scope: undo its renaming.
        loop.iter = generators[0].iter
        for node in walk(loop):
            if getattr(node, "lineno", None) is None:
                gast.copy_location(node, self.current)
        self.statement(loop)

    def expr_Lambda(self, node):
        raise self.location.error(self.current, "a lambda used as a value cannot be "
                                  "differentiated; assign it to a name and call it, or use def",
                                  "lambda")

    def expr_Call(self, node):
        operation = self.object_operation(node)  # abs(a) on an object of the user's
        if operation is not None:
            return operation
        func = node.func
        args, keywords = node.args, node.keywords
        # `self.flatten(x)` calls a method of the object (a layer), never ndarray.flatten.
        of_self = isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id in ("self", "cls")
        if isinstance(func, gast.Attribute) and not self.is_static(func) and not of_self:
            method = func.attr
            if method in LIST_METHODS and self.list_method(func):
                return self.call(gast.Attribute(value=self.atom(func.value), attr=method,
                                                ctx=gast.Load()), args, keywords)
            if method in LIST_METHODS:  # an object's own method, read apart
                return self.call(self.atom(func), args, keywords)
            if method in ARRAY_METHODS or method in PACKED_METHODS or method == "flatten":
                return self.array_method(func.value, method, args, keywords)
            if method in HELPER_METHODS:
                return self.call(name(self.helper_name(HELPER_METHODS[method])),
                                 [func.value] + args, keywords)
            if method in ("items", "keys", "values") and not args:
                return self.call(name(self.helper_name("dict_" + method)), [func.value], [])
        reduction = self.ufunc_reduction(func, args, keywords) or self.singular_values(
            func, args, keywords) or self.einsum_sublists(func, args, keywords)
        # (np.add.reduce(x): np.sum; svd without U, V: svdvals; einsum's sublists: a string)
        if reduction is not None:
            return reduction
        # `p.method(x)` keeps its callee: the gradient of `p` is that of the method's self.
        method_of_name = isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
        if not (isinstance(func, gast.Name) or self.is_static(func) or method_of_name):
            func = self.atom(func)
        return self.call(func, args, keywords)

    def call(self, func, args, keywords):
        if unpacks(args, keywords):  # f(*items, **options): the values, packed
            packed = [joined(args, "tuple"),
                      keywords_value(keywords, self.helper_name("merged_keywords"))]
            # (A method read apart, `_t = p.method`: its gradient is that of `p`.) The random
            # states the call can draw from, noted right before it, for its derivative's run
            # again (runtime/derivatives/random_states.py).
            parts = [self.atom(part) for part in [func] + packed]
            states = self.atom(gast.Call(func=name(self.helper_name("random_states")),
                                         args=parts, keywords=[]))
            return self.call(name(self.helper_name("apply_unpacked")), parts + [states], [])
        return gast.Call(func=func, args=[self.atom(a) for a in args],
                         keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value))
                                   for k in keywords])

    def numpy_call(self, function, args, keywords):
        func = gast.Attribute(value=name(self.numpy_name), attr=function, ctx=gast.Load())
        return self.call(func, args, keywords)

    # ---- iteration -----------------------------------------------------------------------------

    def iteration(self, node):
        """(length atom, item(index) -> expression) for iterating `node` by index."""
        if self.is_call_to(node, enumerate):
            length, item = self.iteration(node.args[0])
            start = None
            if len(node.args) > 1:
                start = self.atom(node.args[1])
            for keyword in node.keywords:
                if keyword.arg == "start":
                    start = self.atom(keyword.value)

            def enumerate_item(index):
                count = index if start is None else gast.BinOp(left=index, op=gast.Add(),
                                                               right=start)
                return gast.Tuple(elts=[count, item(index)], ctx=gast.Load())
            return length, enumerate_item
        if self.is_call_to(node, zip) and not node.keywords:
            parts = [self.iteration(a) for a in node.args]
            length = self.atom(gast.Call(func=name("min"), args=[p[0] for p in parts],
                                         keywords=[])) if len(parts) > 1 else parts[0][0]
            return length, lambda index: gast.Tuple(elts=[p[1](index) for p in parts],
                                                    ctx=gast.Load())
        if self.is_call_to(node, reversed) and len(node.args) == 1:
            length, item = self.iteration(node.args[0])
            last = self.atom(gast.BinOp(left=length, op=gast.Sub(), right=_constant(1)))
            return length, lambda index: item(gast.BinOp(left=last, op=gast.Sub(),
                                                         right=index))
        if self.is_flat(node):  # `for v in x.flat`: x's items in C order
            node = self.flat_items(node.value, None) or node
        sequence = self.atom(gast.Call(func=name(self.helper_name("sequence")), args=[node],
                                       keywords=[]))
        length = self.atom(gast.Call(func=name("len"), args=[sequence], keywords=[]))
        return length, lambda index: gast.Subscript(value=sequence, slice=index,
                                                    ctx=gast.Load())


def _reads(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)}


class _Rename(NodeTransformer):
    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        if node.id in self.renames:
            node.id = self.renames[node.id]
        return node


def normalize(function: gast.FunctionDef, location: Location, namer: Namer, namespace: dict,
              numpy_name: str, helper_name) -> gast.FunctionDef:
    """`function` with its body in A-normal form."""
    normalizer = Normalizer(location, namer, namespace, numpy_name, helper_name)
    normalizer.receivers = ReceiverKinds(function, namespace)
    normalizer.objects = ObjectClasses(function, namespace,
                                       method_class(function, namespace, location))
    normalizer.current = function
    function.body = normalizer.block(function.body)
    return function

