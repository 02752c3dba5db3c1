"""labkit's compiled CFR kernels against the floor: a minimal hand-written numba CFR+ (`floor_cfr.py`).

    .venv/bin/python benchmarks/bench_kernels.py                  # Leduc, goofspiel 4 and 5
    .venv/bin/python benchmarks/bench_kernels.py --repeats 15 --games leduc_poker

For each game, one `step()` at a time (CPU time, `time.process_time`), in alternating blocks so that
a burst of load on this shared machine hits every solver alike, the median over blocks of:

* the floor: `floor_cfr.FloorCFRPlus.step` (CFR+ with nothing but the iteration itself: no exact-tie
  bounds, no numpy twin to equal bit for bit);
* labkit's CFR+, CFR with alternating updates and CFR with simultaneous updates (the chapter's), on
  the default backend (numba where installed; its CFR iteration in C where a C compiler is, see
  labkit/_native.py).

Ratio = labkit time / floor time (the goal of issue 25: at most 1.2). Before timing, the floor's
average policy after 50 iterations is compared with labkit's CFR+ (they differ only where labkit
treats rounding residues as exact ties, e.g. goofspiel 5; both NashConvs are printed).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

GAMES = ["leduc_poker", "goofspiel(num_cards=4,imp_info=True,points_order=descending)",
         "goofspiel(num_cards=5,imp_info=True,points_order=descending)"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=GAMES)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args(argv)

    import labkit as lk
    from floor_cfr import FloorCFRPlus

    from labkit import _native
    kernel = "C (labkit/_cfr_kernel.c)" if _native.cfr_iterations() is not None else "numba"
    print(f"labkit backend: {lk.kernels.backend()}, CFR kernel in {kernel}; CPU time per step(), median of "
          f"{args.repeats} alternating blocks; ratio = labkit / floor (goal <= 1.2)\n")
    for name in args.games:
        game = lk.games.load(name)
        floor = FloorCFRPlus(game)
        solvers = {"floor CFR+": floor, "labkit CFR+": lk.CFRPlus(game),
                   "labkit CFR (alternating)": lk.CFR(game, alternating_updates=True),
                   "labkit CFR (simultaneous)": lk.CFR(game)}
        for solver in solvers.values():
            for _ in range(50):
                solver.step()
        check = (lk.nash_conv(game, floor.average_policy()), lk.nash_conv(game, solvers["labkit CFR+"].average_policy()))
        calls = max(5, int(2_000_000 / game.num_histories))
        samples = {key: [] for key in solvers}
        for _ in range(args.repeats):
            for key, solver in solvers.items():
                step = solver.step
                start = time.process_time()
                for _ in range(calls):
                    step()
                samples[key].append((time.process_time() - start) / calls)
        t = {key: statistics.median(v) for key, v in samples.items()}
        print(f"{name} ({game.num_histories:,} histories; NashConv after 50 CFR+ iterations: floor "
              f"{check[0]:.6g}, labkit {check[1]:.6g})")
        for key, value in t.items():
            print(f"  {key:28s} {value * 1e6:9.2f} us   {value / t['floor CFR+']:5.2f}x the floor")


if __name__ == "__main__":
    main()
