"""Own work, read from the source: which labkit solvers and evaluators a part's functions use.

The kernel's call monitor (`labkit.grading.own_work`) sees what the functions call while they are
probed. This is the second look, taken in the grader's process on the text of the answer cells
(parsed, never run), where nothing the student wrote can interfere: from the functions a part is
probed at, follow every function, class and global variable they read, across all the answer
cells up to the part's own, and report a reference to labkit's solvers and evaluators
(``lk.nash_conv``, ``labkit.evaluate.best_response``, ``from labkit import CFRPlus``,
``getattr(lk, "nash" + "_conv")``, ``importlib.import_module("labkit.cfr")``) or to OpenSpiel. A
global counts when its value was computed with such a reference (``solver = lk.CFRPlus(leduc)``
in one cell, read by ``cfr_plus`` in another), so is a container filled with one.

`static_findings` gives the findings in the monitor's format (``{"name", "called", "static"}``);
`with_static_findings` adds them to a reported value before the hidden checks grade it.
"""
from __future__ import annotations

import ast

from labkit.grading.own_work import ALLOWED, GUARDED_FUNCTIONS

LABKIT = "labkit"
FOREIGN = ("pyspiel", "open_spiel")
# names the package root exports that live in allowed modules
ALLOWED_ROOT = {"games", "TabularPolicy", "uniform_policy", "tree", "policy", "grading", "data"}
# the package root's names from guarded modules (labkit/__init__.py) and its guarded modules
GUARDED_ROOT = {"expected_payoffs", "best_response", "nash_conv", "exploitability", "counterfactual_values",
                "reach_probabilities", "terminal_reach_probabilities", "history_values", "zero_sum_equilibrium",
                "CFR", "CFRPlus", "DCFR", "MCCFR", "MMD", "PSRO", "EFR", "DeviationType"}
GUARDED_POLICY = set(GUARDED_FUNCTIONS["policy.py"])
MUTATORS = {"append", "extend", "update", "setdefault", "insert", "add", "__setitem__"}


def _guarded_path(path):
    """Is the dotted name (``labkit.evaluate.nash_conv``, ``labkit.CFR``) labkit's solver code?"""
    parts = path.split(".")
    if parts[0] in FOREIGN:
        return True
    if parts[0] != LABKIT or len(parts) == 1:
        return False
    head = parts[1]
    if head in GUARDED_ROOT:
        return True
    if head == "policy":
        return len(parts) > 2 and parts[2] in GUARDED_POLICY
    if head in ALLOWED_ROOT or head + ".py" in ALLOWED or head in ALLOWED:
        return False
    return not head.startswith("__")           # another module of labkit: a solver's


def _guarded_text(text):
    """A string that names guarded code, as getattr or importlib would be given it."""
    text = text.strip()
    return bool(text) and (text in GUARDED_ROOT or text.split(".")[0] in FOREIGN
                           or (text.startswith(LABKIT + ".") and _guarded_path(text)))


def _constant_text(node):
    """The value of a string built from constants ("nash" + "_conv", f"{'nash'}_conv"), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _constant_text(node.left), _constant_text(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        pieces = [_constant_text(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return None if any(p is None for p in pieces) else "".join(pieces)
    return None


class _Cells:
    """The module-level definitions of the answer cells, in order: functions, classes, globals."""

    def __init__(self, sources):
        self.aliases = {"lk": LABKIT, LABKIT: LABKIT}       # name -> dotted module or object path
        self.definitions = {}                               # name -> [nodes that define it]
        self.assigned = {}                                  # global name -> [value nodes]
        for source in sources:
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError):
                continue                                    # a cell that does not parse runs nowhere
            for node in tree.body:
                self._top(node)

    def _top(self, node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.definitions[node.name] = [node]            # a later definition replaces an earlier one
            self._globals_in(node)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node)
            return
        for target, value in _assignments(node):
            self.assigned.setdefault(target, []).append(value)
        for child in ast.iter_child_nodes(node):           # imports under if/try/with at the top level
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                self._import(child)

    def _import(self, node):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                self.aliases[name] = alias.name if alias.asname else alias.name.split(".")[0]
        elif node.module:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _globals_in(self, function):
        """Globals a function assigns (``global x; x = ...``): their values are its body's."""
        declared = {n for node in ast.walk(function) if isinstance(node, ast.Global) for n in node.names}
        for name in declared:
            self.assigned.setdefault(name, []).append(function)


def _assignments(node):
    """(global name, value node) pairs of a top-level statement, mutations of a container included."""
    out = []
    if isinstance(node, ast.Assign):
        for target in node.targets:
            out += [(n, node.value) for n in _stored_names(target)]
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
        out += [(n, node.value) for n in _stored_names(node.target)]
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)):
        for child in ast.walk(node):
            if child is not node and isinstance(child, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
                out += _assignments(child)
        if isinstance(node, (ast.For, ast.AsyncFor)):
            out += [(n, node.iter) for n in _stored_names(node.target)]
        if isinstance(node, (ast.With, ast.AsyncWith)):
            out += [(n, item.context_expr) for item in node.items if item.optional_vars is not None
                    for n in _stored_names(item.optional_vars)]
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func                              # cache.update(...), results.append(...)
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS and isinstance(func.value, ast.Name):
            out.append((func.value.id, node.value))
    return out


def _stored_names(target):
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _stored_names(t)]
    if isinstance(target, (ast.Subscript, ast.Attribute)):  # cache[key] = ..., store.value = ...
        base = target.value
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        return [base.id] if isinstance(base, ast.Name) else []
    if isinstance(target, ast.Starred):
        return _stored_names(target.value)
    return []


class _Reader:
    """Follows what a function reads, to the first reference to guarded code."""

    def __init__(self, cells):
        self.cells, self.memo = cells, {}

    def name(self, name, seen):
        """The guarded reference a global name leads to, or None."""
        if name in self.memo:
            return self.memo[name]
        if name in seen:
            return None
        seen = seen | {name}
        found = None
        alias = self.cells.aliases.get(name)
        if alias is not None and name not in self.cells.definitions and _guarded_path(alias):
            found = alias
        for node in self.cells.definitions.get(name, []) + self.cells.assigned.get(name, []):
            found = found or self.node(node, seen)
        self.memo[name] = found
        return found

    def node(self, tree, seen):
        local = _local_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                path = _dotted(node, self.cells.aliases)
                if path and _guarded_path(path):
                    return _source_of(node, path)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
                found = self.name(node.id, seen)
                if found:
                    return found if node.id == found else f"{node.id} ({found})"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [f"{node.module}.{a.name}" for a in node.names if node.module]
                for module in modules:
                    if _guarded_path(module):
                        return module
            else:
                if any(_guarded_text(text) for text in _names_looked_up(node)):
                    text = ast.unparse(node)
                    return text if len(text) <= 80 else text[:77] + "..."
        return None


LOOKUPS = {"getattr", "import_module", "__import__", "attrgetter", "methodcaller", "find_spec", "reload"}


def _names_looked_up(node):
    """The constant strings a node looks a name or module up by: the arguments of ``getattr``,
    ``importlib.import_module``, ``__import__``... and the keys of ``vars(...)[...]``,
    ``globals()[...]`` or ``x.__dict__[...]``."""
    if isinstance(node, ast.Call):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in LOOKUPS:
            return [t for t in map(_constant_text, node.args) if t is not None]
    if isinstance(node, ast.Subscript):
        base = node.value
        namespace = (isinstance(base, ast.Attribute) and base.attr == "__dict__") or (
            isinstance(base, ast.Call) and getattr(base.func, "id", None) in ("vars", "globals"))
        text = _constant_text(node.slice)
        if namespace and text is not None:
            return [text]
    return []


def _local_names(tree):
    """Names a function binds itself (its arguments and assignments), which do not read globals;
    empty for a module-level statement."""
    if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return set()
    args = tree.args
    names = {a.arg for a in args.args + args.posonlyargs + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    declared = {n for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in declared:
            names.add(node.id)
    return names


def _dotted(node, aliases):
    """``labkit.evaluate.nash_conv`` for ``ev.nash_conv`` when ``ev`` is labkit.evaluate, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _source_of(node, path):
    try:
        text = ast.unparse(node)
    except Exception:
        text = path
    return text if text == path or text.startswith(("lk.", LABKIT + ".")) else f"{text} ({path})"


def static_findings(names, sources):
    """[{"name", "called", "static": True}] for the probed `names` whose code reaches guarded code
    in the answer cells `sources` (in notebook order, up to the part's own)."""
    reader = _Reader(_Cells(sources))
    out = []
    for name in names:
        found = reader.name(name, frozenset())
        if found:
            out.append({"name": name, "called": found, "thread": False, "static": True})
    return out


def with_static_findings(part, value, answers, exercise):
    """`value` with the static findings of `part` added to ``__own_work__`` (when the part has an
    own-work rule): `answers` is ``{slot: [sources]}`` of the submission, `exercise` its
    `Exercise` (for the order of the slots)."""
    from labkit.grading.public import SPECS
    public = SPECS.get(part)
    if public is None or getattr(public, "own_work", None) is None or not isinstance(value, dict):
        return value
    slots = []
    for cell in exercise.cells:
        if cell.role == "answer" and cell.slot not in slots:
            slots.append(cell.slot)
    own = [c.slot for c in exercise.cells if c.role == "answer" and c.part == part]
    last = max((slots.index(s) for s in own), default=len(slots) - 1)
    sources = [src for slot in slots[:last + 1] for src in answers.get(slot, [])]
    probed = [n for n in public.names if n in public.probes] or list(public.names)
    found = static_findings(probed, sources)
    if not found:
        return value
    runtime = value.get("__own_work__") if isinstance(value.get("__own_work__"), list) else []
    return {**value, "__own_work__": runtime + found}
