"""The kernel side of grading: `check(part)` reports a student's answer for one part.

This module runs inside the student's Jupyter kernel. It never decides a grade that counts.

* In the notebook UI (self-check), ``check("27.4(a)")`` collects the names the part asks for
  from the notebook's namespace, evaluates function-valued answers at the *public* probe
  arguments, serializes them (`to_plain`), and prints one line computed by the public checks
  (`labkit.grading.public`): the format of the answer, never its score. The hidden checks are
  not part of labkit and never enter a student's kernel.
* Under the grader, ``LABKIT_GRADING_NONCE`` names a file holding a one-time nonce and the
  part specifications to report (the names, and the hidden checks' probe arguments).
  The grader's first cell (`SEAL_SOURCE`, run before any student code) calls `seal()`, which
  reads and deletes that file and captures the JSON encoder, a sha256 constructor, the
  part specifications and the kernel's display publisher *before* an answer cell can replace
  ``json.dumps``, ``print``, ``sys.stdout`` or labkit's functions. From then on ``check`` only
  publishes the serialized value as an ``application/vnd.labkit.check+json`` display record:
  a JSON payload and its HMAC keyed by the nonce. The grader reads that record from the check
  cell's outputs, verifies the HMAC (`verify_record`) and computes the verdict in its own process.

Timing. Every probe call is measured in CPU seconds of the kernel process (`time.process_time`,
every thread counted, plus waited-for children), which a loaded machine changes little, and in
wall-clock seconds; both travel in the record (``__seconds__`` and ``__wall__``, one per probe).
A probe argument may be a *fresh* marker (`labkit.grading.fresh`): each call then gets an input
drawn from a seed derived from the nonce, which nobody knew before the call, so no cache or
earlier computation can answer it, and the seed travels in the record for the grader to check
the result. A timed name (``timing = {name: (budget, repeats)}``) also records the threads that
were running notebook code when its call began, and a fresh call slower than the budget runs
again with another input, up to ``repeats`` times; the fastest run is reported.

Own work. While a part's probes run, a `labkit.grading.own_work.CallMonitor` (installed when
sealing) notes every call from the student's code into labkit's solvers and evaluators or
OpenSpiel, for the parts whose public specification has an `OwnWork` rule; the calls travel in
the record as ``__own_work__`` and the hidden check gives such a part 0.
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

NONCE_VARIABLE = "LABKIT_GRADING_NONCE"
RECORD_MIME = "application/vnd.labkit.check+json"
SEAL_SOURCE = "import labkit.grading.reporter as _labkit_reporter; _labkit_reporter.seal(); del _labkit_reporter"

MAX_ITEMS = 20_000        # numbers in one reported value
MAX_TEXT = 2_000          # characters of one reported string
MAX_RECORD = 400_000      # characters of one encoded record

_sealed = None            # set by seal(): the function that publishes one record


class ReportError(Exception):
    """A value that cannot be reported (too large, nested too deep, of an unknown type).

    Parameters
    ----------
    message : str
    what : str, optional
        What came back ("a TabularPolicy of 936 information sets").
    advice : str, optional
        What to return instead; `_describe_error` words both for a name or a function's result.

    Examples
    --------
    >>> try:
    ...     to_plain(object())
    ... except ReportError as error:
    ...     print(error.what)
    an object of type `object`, which the grader cannot report
    """

    def __init__(self, message: str, what: str | None = None, advice: str | None = None):
        super().__init__(message)
        self.what, self.advice = what, advice


SMALL_POLICY = 64         # infosets of a TabularPolicy reported as {infoset: {action: p}} (Kuhn has 12)


def _kind_mistake(value):
    """A `ReportError` for the common type mistakes: a large TabularPolicy, a method or function
    returned instead of its result, a long string such as a printed table, any other object."""
    kind = type(value).__name__
    if kind == "TabularPolicy" and hasattr(value, "probs"):
        shape = " x ".join(str(n) for n in getattr(value.probs, "shape", ()))
        return ReportError(f"a TabularPolicy of {shape} probabilities is too large to report as a dict",
                           f"a TabularPolicy (a policy object, {shape} probabilities)",
                           "the grader reads a policy as its array of probabilities: return `policy.probs`")
    if callable(value) and hasattr(value, "__name__"):
        owner = getattr(getattr(value, "__self__", None), "__class__", None)
        bound = kind in ("method", "builtin_function_or_method")
        full = f"{owner.__name__}.{value.__name__}" if owner is not None and bound \
            else value.__name__
        noun = "method" if kind in ("method", "builtin_function_or_method", "method-wrapper") else \
            "class" if isinstance(value, type) else "function"
        return ReportError(f"cannot report the {noun} `{full}` itself", f"the {noun} `{full}` itself, not a value",
                           f"call it (`{value.__name__}(...)`) and return what it computes, or use the attribute "
                           "that holds the values (a policy's `.probs`)")
    if isinstance(value, str):
        return ReportError(f"a string of {len(value)} characters is too long to report",
                           f"a string of {len(value)} characters (text, such as a printed table)",
                           "return the numbers themselves (a number, a list or an array), not their printout")
    return ReportError(f"cannot report a value of type {kind}", f"an object of type `{kind}`, which the grader "
                       "cannot report", "return numbers, arrays, lists or dicts of them")


def _make_to_plain():
    """Build `to_plain`. The sealed reporter builds its own copy, whose recursion and numpy
    reference live in a closure, so replacing this module's functions later changes nothing."""
    import numpy as np

    def to_plain(value: Any, _depth: int = 0, _budget: list[int] | None = None) -> Any:
        """A JSON-ready copy of a student's value: numbers, strings, booleans, None, lists, dicts.

        numpy arrays and scalars become (nested) lists of Python numbers, tuples and sets become
        lists, fractions become floats, a small `labkit.TabularPolicy` its
        ``{infoset: {action: probability}}``.

        Parameters
        ----------
        value : object
        _depth : int
            The nesting level (internal: the recursion's).
        _budget : list of one int, optional
            Entries still allowed (internal: shared by the recursion; `MAX_ITEMS` in all).

        Returns
        -------
        None, bool, int, float, str, list or dict

        Raises
        ------
        ReportError
            For anything else (naming its type), a value of more than `MAX_ITEMS` entries, nested
            more than 8 levels, a string longer than `MAX_TEXT`, or the placeholder ``...``.

        Examples
        --------
        >>> import fractions
        >>> import numpy as np
        >>> to_plain({"x": np.array([[1, 2], [3, 4]]), "p": (np.float64(0.5), fractions.Fraction(1, 4))})
        {'x': [[1, 2], [3, 4]], 'p': [0.5, 0.25]}
        >>> to_plain(...)
        Traceback (most recent call last):
        ...
        labkit.grading.reporter.ReportError: it still holds the placeholder `...`
        """
        budget = _budget if _budget is not None else [MAX_ITEMS]
        budget[0] -= 1
        if budget[0] < 0:
            raise ReportError(f"the value has more than {MAX_ITEMS} entries")
        if _depth > 8:
            raise ReportError("the value is nested more than 8 levels deep")
        if value is Ellipsis:
            raise ReportError("it still holds the placeholder `...`")
        if value is None or isinstance(value, (bool, np.bool_)):
            return None if value is None else bool(value)
        if isinstance(value, str):
            if len(value) > MAX_TEXT:
                raise kind_mistake(value)
            return str(value)
        if isinstance(value, (int, np.integer)):
            return int(value) if abs(int(value)) < 2 ** 63 else float(value)
        if isinstance(value, (float, np.floating)):
            return float(value)
        if isinstance(value, np.ndarray):
            if value.size > budget[0]:
                raise ReportError(f"an array of {value.size} entries is too large to report")
            return to_plain(value.tolist(), _depth, budget)
        if isinstance(value, (list, tuple)):
            return [to_plain(v, _depth + 1, budget) for v in value]
        if isinstance(value, (set, frozenset)):
            return [to_plain(v, _depth + 1, budget) for v in sorted(value, key=repr)]
        if isinstance(value, dict):
            return {str(k): to_plain(v, _depth + 1, budget) for k, v in value.items()}
        if type(value).__name__ == "TabularPolicy" and hasattr(value, "to_dict"):
            if len(getattr(value, "probs", ())) > SMALL_POLICY:
                raise kind_mistake(value)           # its dict would flood the record (Leduc: 936 rows)
            return to_plain(value.to_dict(), _depth, budget)              # {infoset: {action: prob}}
        if hasattr(value, "numerator") and hasattr(value, "denominator"):     # fractions.Fraction
            return float(value)
        raise kind_mistake(value)

    kind_mistake = _kind_mistake           # captured: a later patch of the module changes nothing
    return to_plain


to_plain = _make_to_plain()


def _describe_error(exc, name=None, returned=False):
    """The message of a name that could not be reported. For a type mistake (`ReportError` with
    ``what``) it says what came back and what to return: for a value, "`x` is <what> -- <advice>";
    for a function's result, worded to follow the check's "`f` raised": "no error, but returned
    <what> -- <advice>"."""
    if isinstance(exc, ReportError) and exc.what:
        if returned:
            text = f"no error, but returned {exc.what} -- {exc.advice}"
        else:
            text = f"`{name}` is {exc.what} -- {exc.advice}" if name else f"{exc.what} -- {exc.advice}"
    else:
        text = str(exc) if isinstance(exc, ReportError) else f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


# ---------------------------------------------------------------------------------------------
# Probing, timing and the own-work record (what `collect` adds beside the student's values)
# ---------------------------------------------------------------------------------------------
SECONDS_KEY = "__seconds__"      # {name: [CPU seconds of each probe call]}
WALL_KEY = "__wall__"            # {name: [wall-clock seconds of each probe call]}
FRESH_KEY = "__fresh__"          # {name: [seed of the fresh input of each probe, or None]}
BUSY_KEY = "__busy__"            # {name: [threads running notebook code when a timed call began]}
OWN_WORK_KEY = "__own_work__"    # [calls into code the part asks the student to write]


def _make_cpu_clock():
    """CPU seconds of this process, every thread counted, plus the children it has waited for:
    what a call costs, whatever else runs on the machine."""
    try:
        import resource
    except ImportError:           # Windows, or a browser kernel: no children to count
        return time.process_time
    process_time, usage, children = time.process_time, resource.getrusage, resource.RUSAGE_CHILDREN

    def cpu():
        waited = usage(children)
        return process_time() + waited.ru_utime + waited.ru_stime
    return cpu


def _own_work_rules():
    """{part: OwnWork} from the public specifications (what the exercise text states)."""
    try:
        from labkit.grading.public import SPECS
    except Exception:             # the notebook-side checks are missing: nothing to enforce
        return {}
    return {part: spec.own_work for part, spec in SPECS.items() if getattr(spec, "own_work", None)}


class _Probing:
    """What the collector needs to run probe calls, captured once (when sealing, before any
    student code) so that patching labkit, `time` or `sys` afterwards changes nothing."""

    def __init__(self, plain, describe, copy_args, secret, threads):
        from labkit.grading import fresh
        from labkit.grading.own_work import CallMonitor
        self.plain, self.describe, self.copy_args = plain, describe, copy_args
        self.wall, self.cpu = time.perf_counter, _make_cpu_clock()
        self.secret = secret                    # bytes, or a function returning fresh bytes
        self.seed_for, self.realize, self.has_marker = fresh.seed_for, fresh.realize, fresh.has_marker
        self.rules = _own_work_rules()
        self.monitor = CallMonitor(threads=threads)

    def key(self):
        return self.secret() if callable(self.secret) else self.secret


def _make_collector(specs, probing):
    """Build `collect`. With `specs` given (a frozen copy, as the sealed reporter passes), the
    names and probe arguments cannot be changed afterwards by patching labkit's modules."""
    plain, describe, copy_args = probing.plain, probing.describe, probing.copy_args
    wall, cpu, monitor = probing.wall, probing.cpu, probing.monitor

    def one_call(function, args, name, seed, timed, watched):
        """(plain result or {"__error__"}, CPU seconds or None, wall seconds, busy threads,
        findings); the call is watched by the monitor for parts with an own-work rule."""
        call_args = copy_args(args)
        if seed is not None:
            call_args = probing.realize(call_args, seed)
        busy = monitor.busy_threads() if timed else 0
        seconds = took = None
        with (monitor.watch(name) if watched else _unwatched()) as findings:
            try:
                start_wall, start = wall(), cpu()
                result = function(*call_args)
                seconds, took = cpu() - start, wall() - start_wall
            except Exception as exc:              # one failing probe does not hide the others
                result = {"__error__": describe(exc)}
            else:
                try:                              # inside the watch: a value may run code when read
                    result = plain(result)
                except Exception as exc:          # it ran, but what it returned cannot be read
                    result = {"__error__": describe(exc, name, True), "__returned__": True}
        return result, seconds, took, busy, findings

    def probe(function, args, name, part, index, key, timing, watched):
        """One probe: a fresh input is drawn for every run; a timed one with a fresh input runs
        again, with another input, while slower than its budget (up to `repeats` runs), and
        the fastest run is reported. An ordinary input runs once: repeating it would time a
        cache."""
        budget, repeats = timing.get(name, (None, 1))
        fresh = probing.has_marker(args)
        best, findings = None, []
        for run in range(repeats if fresh else 1):
            seed = probing.seed_for(key, part, name, index, run) if fresh else None
            result, seconds, took, busy, found = one_call(function, args, name, seed, name in timing, watched)
            findings += [f for f in found if f not in findings]
            this = (result, seconds, took, busy, seed)
            if best is None or (seconds is not None and (best[1] is None or seconds < best[1])):
                best = this
            if seconds is None or budget is None or seconds <= budget:
                break
        return best, findings

    def collect(part_id, namespace, spec=None):
        """The serialized answer of one part: {name: value} for the names the part reads.

        A callable answer is evaluated at the part's probe arguments, giving a list of results.
        Beside the values: ``__seconds__[name]`` the CPU seconds of each call (every thread of
        the kernel counted, the copying of the arguments left out), ``__wall__[name]`` its wall
        clock, ``__fresh__[name]`` the seeds of fresh inputs (`labkit.grading.fresh`),
        ``__busy__[name]`` for timed names the threads running notebook code when the call
        began, and ``__own_work__`` the calls into code the part asks the student to write
        (`labkit.grading.own_work`; present for parts with such a rule). A missing name, a
        raising function or a value that cannot be serialized is reported as
        ``{"__error__": "..."}`` in its place, so the grader can say what went wrong.
        """
        if specs is not None:
            names, probes, timing = specs[part_id]
        else:
            if spec is None:          # the notebook's self-check: the public names and probes
                from labkit.grading.public import spec_for
                spec = spec_for(part_id)
            names, probes, timing = spec.names, spec.probes, getattr(spec, "timing", None) or {}
        rule, key = probing.rules.get(part_id), probing.key()
        out, extra, findings = {}, {SECONDS_KEY: {}, WALL_KEY: {}, FRESH_KEY: {}, BUSY_KEY: {}}, []
        for name in names:
            if name not in namespace:
                out[name] = {"__error__": f"`{name}` is not defined"}
                continue
            value = namespace[name]
            try:
                if name in probes:
                    if not callable(value):
                        raise ReportError(f"`{name}` should be a function, got {type(value).__name__}")
                    runs = []
                    for index, args in enumerate(probes[name]):
                        best, found = probe(value, args, name, part_id, index, key, timing, rule is not None)
                        runs.append(best)
                        findings += [f for f in found if f not in findings]
                    out[name] = [r[0] for r in runs]
                    extra[SECONDS_KEY][name] = [r[1] for r in runs]
                    extra[WALL_KEY][name] = [r[2] for r in runs]
                    if any(r[4] is not None for r in runs):
                        extra[FRESH_KEY][name] = [r[4] for r in runs]
                    if name in timing:
                        extra[BUSY_KEY][name] = [r[3] for r in runs]
                else:
                    out[name] = plain(value)
            except Exception as exc:
                out[name] = {"__error__": describe(exc, name)}
        out.update({k: v for k, v in extra.items() if v})
        if rule is not None:
            out[OWN_WORK_KEY] = findings
        return out

    return collect


class _unwatched:
    """The stand-in for a watch where no own-work rule applies: no monitor, no findings."""

    def __enter__(self):
        return []

    def __exit__(self, *exc):
        return False


def _copy_args(args):
    """Copies of the probe arguments, so that a function that modifies its input cannot
    change what the next probe sees."""
    import copy
    return tuple(copy.deepcopy(a) for a in args)


_public_collect = None


def collect(part_id: str, namespace: Mapping[str, Any], spec: Any = None) -> dict[str, Any]:
    """The serialized answer of one part, as the notebook's (unsealed) collector makes it: {name:
    value} for the names the part reads, a callable evaluated at the part's probe arguments.

    Beside the values: ``__seconds__[name]`` the CPU seconds of each call, ``__wall__[name]`` its
    wall clock, ``__fresh__`` the seeds of fresh inputs and ``__busy__`` the busy threads of timed
    names (see `_make_collector`). A missing name, a raising function or a value that cannot be
    serialized is ``{"__error__": "..."}`` in its place. Fresh inputs come from a new random
    secret at every call; calls are watched in this thread and threads started during the call.

    Parameters
    ----------
    part_id : str
        E.g. "27.4(a)".
    namespace : mapping
        The notebook's names.
    spec : optional
        Has ``names``, ``probes`` ({name: [args, ...]}) and optionally ``timing``; default the
        part's public specification (`labkit.grading.public.spec_for`).

    Returns
    -------
    dict

    Examples
    --------
    >>> import types
    >>> spec = types.SimpleNamespace(names=["total", "double", "missing"], probes={"double": [(2,), (5,)]})
    >>> answer = collect("1.1(a)", {"total": 3, "double": lambda x: 2 * x}, spec)
    >>> {name: answer[name] for name in spec.names}
    {'total': 3, 'double': [4, 10], 'missing': {'__error__': '`missing` is not defined'}}
    >>> len(answer["__seconds__"]["double"])                 # CPU seconds of each probe call
    2
    """
    global _public_collect
    if _public_collect is None:
        _public_collect = _make_collector(None, _Probing(to_plain, _describe_error, _copy_args,
                                                         lambda: os.urandom(32), threads=False))
    return _public_collect(part_id, namespace, spec)


def seal() -> None:
    """Capture the nonce and the publishing tools before any student code runs (grader only).

    The grader's first cell (`SEAL_SOURCE`) calls it in the kernel; it reads and deletes the
    file that ``LABKIT_GRADING_NONCE`` names and from then on `check` publishes signed records.
    Without that variable (a student's own notebook) it does nothing; a second call does nothing.

    Examples
    --------
    >>> import os
    >>> NONCE_VARIABLE in os.environ                  # not under the grader
    False
    >>> seal()
    >>> _sealed is None                              # nothing sealed: check() gives feedback
    True
    """
    global _sealed
    if _sealed is not None:
        return
    nonce_file = os.environ.pop(NONCE_VARIABLE, None)
    if not nonce_file:
        return
    # the nonce travels in a file that is deleted at once, so that it is not left in the
    # environment (which /proc/self/environ would still show) for an answer cell to read
    import hashlib
    import json
    with open(nonce_file, encoding="ascii") as f:
        sealed = json.load(f)
    os.remove(nonce_file)
    from IPython import get_ipython
    from labkit.grading.wire import decode_specs
    nonce, specs = str(sealed["nonce"]), decode_specs(sealed["specs"])
    encode = json.JSONEncoder(allow_nan=True, ensure_ascii=True, sort_keys=True).encode
    mac = _make_mac(nonce.encode("ascii"), hashlib.sha256)
    shell = get_ipython()
    publish = shell.display_pub.publish
    namespace = shell.user_ns
    # fresh probe inputs are drawn from a key derived from the nonce; the monitor of calls into
    # labkit's solvers is installed for every thread started from now on
    fresh_key = hashlib.sha256(b"labkit fresh inputs|" + nonce.encode("ascii")).digest()
    collect_sealed = _make_collector(specs, _Probing(_make_to_plain(), _describe_error, _copy_args, fresh_key,
                                                     threads=True))

    def publish_record(part_id):
        try:
            payload = encode({"part": part_id, "value": collect_sealed(part_id, namespace)})
            if len(payload) > MAX_RECORD:
                payload = encode({"part": part_id, "value": {"__error__": "the reported value is too large"}})
        except Exception as exc:
            payload = encode({"part": part_id, "value": {"__error__": type(exc).__name__}})
        # the payload travels as a string with its HMAC: the grader rejects it if anything on the
        # way (a patched json.dumps in the kernel's messaging, say) changed a character
        publish(data={RECORD_MIME: {"part": part_id, "payload": payload, "mac": mac(payload)},
                      "text/plain": f"[answer to {part_id} recorded for grading]"}, metadata={})

    _sealed = publish_record


def _make_mac(key, sha256):
    """HMAC-SHA256 (RFC 2104) over a text, built from a captured sha256 constructor so that
    patching `hmac` or `hashlib` after sealing cannot see the key or change the result."""
    block = 64
    key = sha256(key).digest() if len(key) > block else key
    key = key + b"\0" * (block - len(key))
    inner, outer = bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)

    def mac(text):
        return sha256(outer + sha256(inner + text.encode("utf-8")).digest()).hexdigest()
    return mac


def verify_record(data: Any, nonce: str, part_id: str) -> Any:
    """The value of a record published by the sealed reporter, or None if it is not genuine
    (wrong key, altered payload, another part). Runs in the grader.

    The record is ``{"part", "payload", "mac"}``: the payload a JSON text ``{"part", "value"}``,
    the mac its HMAC-SHA256 keyed by the kernel's nonce.

    Parameters
    ----------
    data : object
        The record as read from the cell's display data (anything: it is checked).
    nonce : str
        The nonce of the kernel that ran the cell.
    part_id : str
        The part the check cell reports.

    Returns
    -------
    object or None
        The reported value.

    Examples
    --------
    >>> import hashlib, hmac, json
    >>> payload = json.dumps({"part": "27.1(a)", "value": {"total": 3}})
    >>> record = {"part": "27.1(a)", "payload": payload,
    ...           "mac": hmac.new(b"n0nce", payload.encode(), hashlib.sha256).hexdigest()}
    >>> verify_record(record, "n0nce", "27.1(a)")
    {'total': 3}
    >>> verify_record(record, "another nonce", "27.1(a)") is None, verify_record(record, "n0nce", "27.2(a)") is None
    (True, True)
    """
    import hashlib
    import hmac
    import json
    if not isinstance(data, dict) or not isinstance(data.get("payload"), str) or not isinstance(data.get("mac"), str):
        return None
    expected = hmac.new(nonce.encode("ascii"), data["payload"].encode("utf-8"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, data["mac"]):
        return None
    try:
        record = json.loads(data["payload"])
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("part") != part_id or "value" not in record:
        return None
    return record["value"]


def check(part_id: str) -> None:
    """Report your answer to one part; in the notebook, also print whether it passes the public checks.

    Prints one line, ``27.4(a): public checks pass (4 checks) -- the grader scores it on its own
    cases``, followed by what was checked, or ``27.4(a): not ready -- ...`` followed by hints (a
    missing name, a wrong shape, a wrong value on a public case worked out by hand); see
    `labkit.grading.public.FormatResult`. The points are decided by the instructor's grader, on
    cases of its own.

    Parameters
    ----------
    part_id : str
        E.g. "27.4(a)".

    Examples
    --------
    Outside a notebook there is no namespace to read, so every name is missing:

    >>> check("27.1(a)")
    27.1(a): not ready -- 6 of 6 public checks fail
        hint: learn returns (T, m) and (T, k) strategies: `learn` is not defined
    ...
    """
    if _sealed is not None:
        _sealed(part_id)
        return
    from IPython import get_ipython
    from labkit.grading.public import feedback
    shell = get_ipython()
    namespace = shell.user_ns if shell is not None else {}
    result = feedback(part_id, collect(part_id, namespace))
    print("\n".join(result.lines()))

