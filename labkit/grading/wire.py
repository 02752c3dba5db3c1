"""Probe arguments as JSON, so the grader can hand the hidden checks' probes to a sandboxed kernel.

Probe arguments are numbers, strings, booleans, None, tuples, lists, dicts and numpy arrays.
`encode` turns them into JSON-ready data (an array becomes ``{"__ndarray__": nested list,
"dtype": "float64"}``, a tuple ``{"__tuple__": [...]}``); `decode` restores them exactly (floats
travel as their shortest round-trip representation).
"""
from __future__ import annotations


def encode(value):
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


def decode(value):
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


def encode_specs(specs):
    """{part: [names, {name: [args, ...]}, {name: [budget, repeats]}]} for the parts given
    (objects with .names, .probes and, optionally, .timing)."""
    return {part: [list(spec.names), {name: [encode(tuple(args)) for args in calls]
                                      for name, calls in spec.probes.items()},
                   {name: [float(b), int(r)] for name, (b, r) in getattr(spec, "timing", {}).items()}]
            for part, spec in specs.items()}


def decode_specs(data):
    """{part: (names, probes, timing)}, the inverse of `encode_specs`."""
    out = {}
    for part, entry in data.items():
        names, probes = entry[0], entry[1]
        timing = entry[2] if len(entry) > 2 else {}
        out[part] = (tuple(names), {name: [tuple(decode(a)) for a in calls] for name, calls in probes.items()},
                     {name: (float(b), int(r)) for name, (b, r) in timing.items()})
    return out
