"""Memory of one grading job: the part specifications once per job against once per kernel.

    .venv/bin/python benchmarks/bench_grading_job.py [--exercise L15] [--workers 8]

The grader sends each submission's driver a job holding the hidden probes encoded for the kernel
(Lab 15: three Leduc policies, the Monte Carlo random streams, ...). Until issue 12's remainder
the job held one copy per kernel the driver may start (`MAX_KERNELS` = 8 seals, each with the
specifications); now it holds one, and the encoded specifications are built once per exercise and
shared by every submission and worker thread. For both layouts, side by side in one run, this
prints the bytes of the job's JSON, and the peak memory (tracemalloc) of building and serializing
`--workers` jobs at once in the grader and of parsing one job in the driver.
"""
from __future__ import annotations

import argparse
import json
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "instructor"))

from labkit.grading import grader  # noqa: E402
from labkit.grading.material import load  # noqa: E402
from labkit.grading.notebooks import Submission, graded_cells  # noqa: E402
from labkit.grading.wire import encode_specs  # noqa: E402


def per_kernel_layout(plan, specs, timeout, budget):
    """The former job: encoded once per submission, the same object in each of the 8 seals
    (so 8 copies in the JSON text and in the driver's parsed job)."""
    job, nonces = grader.build_job(plan, specs, timeout, budget, {})
    del job["specs"]
    encoded = encode_specs(specs)
    job["seals"] = [{"nonce": n, "specs": encoded} for n in nonces]
    return job


def shared_layout(plan, specs, timeout, budget, exercise):
    return grader.build_job(plan, specs, timeout, budget, grader._encoded_specs(exercise, specs))[0]


def peak(make, workers):
    """(MB peak while `workers` jobs are built and serialized at once, MB peak of parsing one)."""
    tracemalloc.start()
    texts = [json.dumps(make()) for _ in range(workers)]
    grader_peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    tracemalloc.start()
    json.loads(texts[0])
    driver_peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return len(texts[0].encode()), grader_peak, driver_peak


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", default="L15")
    parser.add_argument("--workers", type=int, default=8, help="jobs held at the same time in the grader")
    args = parser.parse_args(argv)
    mat = load(ROOT / "instructor")
    ex = mat.EXERCISES[args.exercise]
    plan = graded_cells(ex, Submission(ex.number, {}, {}))
    specs = {p: mat.spec_for(p) for p in ex.parts}
    before = peak(lambda: per_kernel_layout(plan, specs, 60.0, 600.0), args.workers)
    grader._encoded.clear()
    after = peak(lambda: shared_layout(plan, specs, 60.0, 600.0, ex), args.workers)
    print(f"exercise {ex.number}, {args.workers} jobs in the grader at once")
    print(f"{'layout':<28}{'job JSON (MB)':>15}{'grader peak (MB)':>18}{'driver parse (MB)':>19}")
    for name, (size, g, d) in (("one copy per kernel (8)", before), ("one copy per job, shared", after)):
        print(f"{name:<28}{size / 1e6:>15.2f}{g:>18.1f}{d:>19.1f}")
    print(f"ratio before/after: job {before[0] / after[0]:.1f}x, grader {before[1] / after[1]:.1f}x, "
          f"driver {before[2] / after[2]:.1f}x")


if __name__ == "__main__":
    main()
