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
        `check(...)` cell tests your answer on small public cases worked out by hand and prints a
        verdict such as `{number}(a): public checks pass (N checks) -- the grader scores it on its
        own cases`, with the checks it ran under it, or hints when something is off (a name not
        defined, a wrong shape, a wrong value on a public case). Passing them is a good sign, not a
        grade: the points are decided by your instructor's grader, on cases of its own. It runs only
        your answer cells, in a fresh sandboxed kernel, in front of its own copy of the check cells,
        so code you put in other cells, or changes to the check cells, are not seen. Keep each
        part's code in its own answer cell; the written parts are graded by hand.
    """)
