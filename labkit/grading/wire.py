"""Probe arguments as JSON, so the grader can hand the hidden checks' probes to a sandboxed kernel.

Probe arguments are numbers, strings, booleans, None, tuples, lists, dicts and numpy arrays.
`encode` turns them into JSON-ready data (an array becomes ``{"__ndarray__": nested list,
"dtype": "float64"}``, a tuple ``{"__tuple__": [...]}``); `decode` restores them exactly (floats
travel as their shortest round-trip representation).
"""
from __future__ import annotations

from typing import Any


def encode(value: Any) -> Any:
    """JSON-ready data for a probe argument (see the module's docstring).

    Parameters
    ----------
    value : number, str, bool, None, tuple, list, dict or numpy array

    Returns
    -------
    JSON-ready data

    Raises
    ------
    TypeError
        For another type.

    Examples
    --------
    >>> import numpy as np
    >>> encode((np.array([0.5, 0.25]), [1, "a"], None))
    {'__tuple__': [{'__ndarray__': [0.5, 0.25], 'dtype': 'float64'}, [1, 'a'], None]}
    """
    import numpy as np
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot send a probe argument of type {type(value).__name__} to the kernel")


def decode(value: Any) -> Any:
    """The probe argument `encode` encoded, restored exactly.

    Parameters
    ----------
    value : JSON data

    Returns
    -------
    object

    Examples
    --------
    >>> import numpy as np
    >>> argument = (np.array([[1, 2]], dtype=np.int64), {"k": 0.1})
    >>> restored = decode(encode(argument))
    >>> restored[0].dtype, restored[0].tolist(), restored[1]
    (dtype('int64'), [[1, 2]], {'k': 0.1})
    """
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "__ndarray__" in value:
            import numpy as np
            return np.array(value["__ndarray__"], dtype=value.get("dtype", "float64"))
        if "__tuple__" in value:
            return tuple(decode(v) for v in value["__tuple__"])
        return {k: decode(v) for k, v in value.items()}
    return value


def encode_specs(specs: dict[str, Any]) -> dict[str, list[Any]]:
    """{part: [names, {name: [args, ...]}, {name: [budget, repeats]}]} for the parts given.

    Parameters
    ----------
    specs : dict
        {part: object with ``names``, ``probes`` and, optionally, ``timing``}.

    Returns
    -------
    dict
        JSON-ready.

    Examples
    --------
    >>> import types
    >>> spec = types.SimpleNamespace(names=("double",), probes={"double": [(2,), (5,)]}, timing={"double": (1, 2)})
    >>> encode_specs({"1.1(a)": spec})
    {'1.1(a)': [['double'], {'double': [{'__tuple__': [2]}, {'__tuple__': [5]}]}, {'double': [1.0, 2]}]}
    """
    return {part: [list(spec.names), {name: [encode(tuple(args)) for args in calls]
                                      for name, calls in spec.probes.items()},
                   {name: [float(b), int(r)] for name, (b, r) in getattr(spec, "timing", {}).items()}]
            for part, spec in specs.items()}


def decode_specs(data: dict[str, list[Any]]) -> dict[str, tuple[Any, ...]]:
    """{part: (names, probes, timing)}, the inverse of `encode_specs`.

    Parameters
    ----------
    data : dict
        As `encode_specs` made it (timing optional).

    Returns
    -------
    dict
        {part: (tuple of names, {name: [args tuple, ...]}, {name: (budget, repeats)})}.

    Examples
    --------
    >>> decode_specs({"1.1(a)": [["double"], {"double": [{"__tuple__": [2]}]}, {"double": [1.0, 2]}]})
    {'1.1(a)': (('double',), {'double': [(2,)]}, {'double': (1.0, 2)})}
    """
    out = {}
    for part, entry in data.items():
        names, probes = entry[0], entry[1]
        timing = entry[2] if len(entry) > 2 else {}
        out[part] = (tuple(names), {name: [tuple(decode(a)) for a in calls] for name, calls in probes.items()},
                     {name: (float(b), int(r)) for name, (b, r) in timing.items()})
    return out
