"""Cells every exercise notebook shares."""
from labkit.grading.notebooks import md, setup

SETUP = setup("""
    import numpy as np
    import labkit as lk
    from labkit.grading import check
""")


def how_to(number):
    return md(f"""
        **How this notebook is graded.** Write your code in the cells marked *answer* (their tag is
        `answer`) and your arguments in the markdown cells that say *Write your answer here*. Each
        `check(...)` cell reports the names it needs from your answer and prints one line,
        `{number}(a): pass 2/2`, with hints when something is off. Your instructor's grader runs only
        your answer cells, in a fresh kernel, in front of its own copy of the check cells: code you
        put in other cells, or changes to the check cells, are not seen. Keep each part's code in its
        own answer cell; the written parts are graded by hand.
    """)
