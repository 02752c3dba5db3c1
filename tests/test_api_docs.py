"""labkit's reference documentation is complete: every public function, class and method of the
documented modules has a numpy-style docstring with an executed example, and annotations.

"Public" means defined in the module (not imported into it) under a name without a leading
underscore, and the public methods and properties of such classes. The examples themselves run in
tests/test_doctests.py; this test checks they are there, with the sections a reader looks for.

DOCUMENTED lists the modules whose documentation is complete; a module joins the list when its
docstrings are written (the lead extends it as the other modules are done).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import re

import pytest

DOCUMENTED = [
    "labkit", "labkit.__main__", "labkit.games", "labkit.games.base", "labkit.games.deals", "labkit.games.goofspiel",
    "labkit.games.kuhn", "labkit.games.leduc", "labkit.games.matrix", "labkit.games.openspiel_adapter",
    "labkit.tree", "labkit.policy", "labkit.evaluate", "labkit.regret", "labkit.cfr", "labkit.mccfr",
    "labkit.solver", "labkit.kernels", "labkit.kernel_polling", "labkit.lp", "labkit.dynamics", "labkit.mmd",
    "labkit.psro", "labkit.social", "labkit.cooperative", "labkit._messages", "labkit._cli",
    "labkit.hindsight", "labkit.efr.deviations", "labkit.efr.learner", "labkit.efr.fixed_point", "labkit.efr.eigen",
    "labkit.efr.paper_numerics",
    "labkit.experiments.claims", "labkit.experiments.estimate", "labkit.experiments.executors",
    "labkit.experiments.games", "labkit.experiments.results", "labkit.experiments.tournament", "labkit.experiments.authors",
    "labkit.experiments.plot", "labkit.experiments.__main__", "labkit.plot", "labkit.widgets", "labkit.data",
    "labkit.grading.render", "labkit.grading.roster", "labkit.grading.lms", "labkit.grading.manual",
    "labkit.grading.review", "labkit.grading.feedback",
    "labkit.grading.gradebook", "labkit.grading.course", "labkit.grading.cpuclock", "labkit.grading.driver",
    "labkit.grading.intake", "labkit.grading.reporter", "labkit.grading.checking",
    "labkit.grading.runner", "labkit.grading.sandbox", "labkit.grading.grader",
    "labkit.grading.wire", "labkit.grading.identity", "labkit.grading.material", "labkit.grading.hardening",
    "labkit.grading.fresh", "labkit.grading.journal", "labkit.grading.slots",
    "labkit.grading.outputs", "labkit.grading.binds", "labkit.grading.nbgrader_export",
    "labkit.grading.notebooks", "labkit.grading.report", "labkit.grading.gradescope",
    "labkit.grading.own_work", "labkit.grading.cgroups",
]
# labkit.deep needs its optional extra (JAX); without it its modules are left out, as in test_doctests
DEEP = ["labkit.deep.common", "labkit.deep.features", "labkit.deep.networks", "labkit.deep.deep_cfr", "labkit.deep.nfsp",
        "labkit.deep.rnad", "labkit.deep.team_learner", "labkit.deep.teams", "labkit.deep.iql", "labkit.deep.vdn",
        "labkit.deep.qmix", "labkit.deep.coma", "labkit.deep.mappo"]
if importlib.util.find_spec("jax") is not None:
    DOCUMENTED += DEEP


def _public(module):
    """(qualified name, object, owner class or None) for the module's public API."""
    for name, value in sorted(vars(module).items()):
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value):
            yield name, value, None
        elif inspect.isclass(value):
            yield name, value, None
            for attr, member in sorted(vars(value).items()):
                if attr.startswith("_"):
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member) or isinstance(member, property):
                    yield f"{name}.{attr}", member, value


CALLABLES = [pytest.param(obj, owner, id=f"{module}.{name}")
             for module in DOCUMENTED for name, obj, owner in _public(importlib.import_module(module))]


def _doc(obj):
    return inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or ""


def _sections(doc):
    return set(re.findall(r"^(\w[\w ]*)\n-{3,}$", doc, flags=re.MULTILINE))


def test_the_documented_modules_have_a_public_api():
    assert len(CALLABLES) >= 190


@pytest.mark.parametrize("obj, owner", CALLABLES)
def test_docstring_has_an_example(obj, owner):
    doc = _doc(obj)
    assert doc, "no docstring"
    examples = doc.split("Examples\n--------", 1)
    assert len(examples) == 2, "no Examples section"
    assert ">>> " in examples[1], "the Examples section has no example"


def _signature(obj):
    function = obj.fget if isinstance(obj, property) else obj
    if inspect.isclass(function):
        if "__init__" not in vars(function) or getattr(function, "_is_protocol", False):
            return None                               # inherited (an exception) or a protocol: no parameters
        function = function.__init__
    return inspect.signature(function)


@pytest.mark.parametrize("obj, owner", CALLABLES)
def test_parameters_and_returns_are_documented(obj, owner):
    doc, signature = _doc(obj), _signature(obj)
    sections = _sections(doc)
    if signature is None:
        return
    names = [p for p in signature.parameters if p not in ("self", "cls")]
    if names and not inspect.isclass(obj) and not isinstance(obj, property):
        assert "Parameters" in sections, f"parameters {names} are not documented"
    if inspect.isclass(obj) and names:
        assert "Parameters" in sections or "Attributes" in sections, f"parameters {names} are not documented"
    function = obj.fget if isinstance(obj, property) else obj
    if not inspect.isclass(obj) and signature.return_annotation not in ("None", None, inspect.Signature.empty):
        if not isinstance(obj, property) and not inspect.isgeneratorfunction(function):
            assert sections & {"Returns", "Yields"}, "what it returns is not documented"


@pytest.mark.parametrize("obj, owner", CALLABLES)
def test_annotations(obj, owner):
    signature = _signature(obj)
    if signature is None:
        return
    missing = [name for name, p in signature.parameters.items()
               if name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    assert not missing, f"parameters without annotations: {missing}"
    if not inspect.isclass(obj):
        assert signature.return_annotation is not inspect.Signature.empty, "no return annotation"
