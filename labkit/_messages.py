"""Helpers for error messages."""
from typing import Any

import numpy as np


def show(value: Any) -> str:
    """repr of `value` as a reader would type it: numpy scalars as plain Python numbers (5, not
    np.int64(5)), everything else unchanged.

    Parameters
    ----------
    value : object

    Returns
    -------
    str

    Examples
    --------
    >>> show(np.int64(5)), show(np.float64(0.5)), show("five")
    ('5', '0.5', "'five'")
    """
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)
