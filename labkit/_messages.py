"""Helpers for error messages."""
import numpy as np


def show(value):
    """repr of `value` as a reader would type it: numpy scalars as plain Python numbers (5, not
    np.int64(5)), everything else unchanged."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)
