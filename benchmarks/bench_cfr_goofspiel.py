"""CFR and CFR+ per iteration on the book's goofspiel variants, labkit beside OpenSpiel's C++ solvers.

    .venv/bin/python benchmarks/bench_cfr_goofspiel.py

OpenSpiel's CFR needs a sequential game, so its side runs on `pyspiel.convert_to_turn_based` of the
same game (the same information sets); labkit compiles the simultaneous-move game directly. CPU time
(`time.process_time`), one process, both solvers measured in the same run; ratio = OpenSpiel / labkit.
"""
import time

import pyspiel

import labkit as lk

GAMES = [
    "goofspiel(num_cards=4,imp_info=True,points_order=descending)",
    "goofspiel(num_cards=4,imp_info=True,points_order=random)",
]
SOLVERS = [("CFR+", pyspiel.CFRPlusSolver, lk.CFRPlus), ("CFR", pyspiel.CFRSolver, lk.CFR)]


def seconds_per_iteration(step, iterations):
    step()                       # the first iteration pays for allocation and compilation
    start = time.process_time()
    for _ in range(iterations):
        step()
    return (time.process_time() - start) / iterations


def main():
    print(f"labkit kernels: {lk.kernels.backend()}")
    for spec in GAMES:
        theirs = pyspiel.convert_to_turn_based(pyspiel.load_game(spec))
        ours = lk.games.load(spec)
        for name, openspiel_solver, labkit_solver in SOLVERS:
            reference = seconds_per_iteration(openspiel_solver(theirs).evaluate_and_update_policy, 5)
            labkit = seconds_per_iteration(labkit_solver(ours).step, 50)
            print(f"{spec} {name}: labkit {labkit * 1e3:.3f} ms, OpenSpiel C++ "
                  f"{reference * 1e3:.3f} ms, ratio {reference / labkit:.1f}x")


if __name__ == "__main__":
    main()
