#!/usr/bin/env python
"""How far a run of labkit.deep may differ on another CPU: the same slices under XLA's CPU flags varied.

JAX on CPU is bit-identical run after run on one machine, but XLA compiles its float32 kernels for
the processor it finds: another instruction set (AVX-512, AVX2, AVX, SSE4.2) vectorizes sums
differently, so the last bits of a network's outputs change; once a changed bit flips a sampled
action, the rest of the run follows another path. This script reruns the first checkpoints of the
first seed of every cached result (scripts/regenerate_deep.py) once per XLA variant, each in its own
process, and prints how far each variant's value lies from the default compilation's and from the
cache.

    .venv/bin/python scripts/deep_tolerance.py                       # every result, 3 checkpoints
    .venv/bin/python scripts/deep_tolerance.py deep_cfr_leduc --checkpoints 1 --out /tmp/tol.json

`--xla_cpu_max_isa=AVX2` is what XLA compiles on a processor without AVX-512 (e.g. AMD EPYC of the
Zen 2/3 generations); the script refuses variants the machine cannot run faster than it (an ISA
newer than the processor's is simply not used). The printed table is what labkit/data/deep/README.md
quotes; tests/test_deep_data.py compares within the tolerances derived from it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"   # regenerate_deep.py's
# name -> (XLA flags added, environment added, command prefix)
NUMPY_WITHOUT_AVX512 = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
VARIANTS = {
    "default": ("", {}, []),
    "AVX2": ("--xla_cpu_max_isa=AVX2", {}, []),
    "AVX": ("--xla_cpu_max_isa=AVX", {}, []),
    "SSE4_2": ("--xla_cpu_max_isa=SSE4_2", {}, []),
    "fast math": ("--xla_cpu_enable_fast_math=true", {}, []),
    # numpy's own kernels (exp, log, sums) without their AVX-512 versions, and XLA's code generation
    # limited to AVX2: what a processor without AVX-512 runs, as far as flags can say it
    "numpy AVX2": ("--xla_cpu_max_isa=AVX2", NUMPY_WITHOUT_AVX512, []),
    # the whole process on an emulated AMD EPYC (Zen 2: AVX2 and FMA, no AVX-512): every library's
    # run-time dispatch (numpy, XLA's runtime, its kernels) sees that processor; needs qemu-user
    # (Debian: apt-get install qemu-user) and is 5-20 times slower
    "EPYC-Rome (qemu)": ("", {}, ["qemu-x86_64", "-cpu", "EPYC-Rome"]),
}
RESULTS = ("deep_cfr_leduc", "deep_cfr_kuhn", "nfsp_leduc", "nfsp_kuhn", "neural_mmd", "teams")
VALUE = {"teams": "team_value"}


def _child(name, checkpoints):
    """Runs in the subprocess: print the rows of the slice as JSON."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import regenerate_deep
    rows = regenerate_deep.make(name, checkpoints=checkpoints)
    print(json.dumps([{k: v for k, v in row.items() if k not in ("cpu_seconds", "policy")} for row in rows]))


def run_slice(name, checkpoints, variant):
    flags, extra, prefix = VARIANTS[variant]
    env = dict(os.environ, XLA_FLAGS=f"{BASE_FLAGS} {flags}".strip(), **extra)
    done = subprocess.run([*prefix, sys.executable, __file__, "--child", name, "--checkpoints", str(checkpoints)],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{name} under {variant}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _key(row, value):
    return tuple((k, str(v)) for k, v in row.items() if k not in (value, "best_response_nash_conv",
                                                                   "greedy_actions"))


def compare(name, by_variant):
    """{checkpoint key: {variant: value}} for the learned (JAX) rows, and the cached values."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import regenerate_deep
    value = VALUE.get(name, "nash_conv")
    cached = {_key({k: v for k, v in r.items() if k != "cpu_seconds"}, value): float(r[value])
              for r in regenerate_deep.read_csv(ROOT / "labkit" / "data" / "deep" / f"{name}.csv")}
    table = {}
    for variant, rows in by_variant.items():
        for row in rows:
            if row.get("method") in ("CFR", "CFR+", "MCCFR (external sampling)", "MMD (tabular)"):
                continue
            key = _key(row, value)
            table.setdefault(key, {"cached": cached.get(key)})[variant] = float(row[value])
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", default=list(RESULTS))
    parser.add_argument("--checkpoints", type=int, default=3, help="leading checkpoints of seed 0 (default 3)")
    parser.add_argument("--variants", nargs="+", default=["default", "AVX2", "numpy AVX2"], choices=list(VARIANTS))
    parser.add_argument("--out", default=None, help="also write the measurements as JSON")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child, args.checkpoints)
    report = {}
    for name in args.results:
        by_variant = {}
        for variant in args.variants:
            start = time.time()
            by_variant[variant] = run_slice(name, args.checkpoints, variant)
            print(f"  {name} under {variant}: {time.time() - start:.0f} s", file=sys.stderr, flush=True)
        report[name] = compare(name, by_variant)
        print(f"{name}  (max |variant - default| over {', '.join(v for v in args.variants if v != 'default')}; "
              "default - cached)")
        for key, values in report[name].items():
            spread = max((abs(values[v] - values["default"]) for v in args.variants if v in values), default=0.0)
            cached = "" if values["cached"] is None else f"{values['default'] - values['cached']:+.2e}"
            label = ", ".join(f"{k}={v}" for k, v in key if k not in ("seed",))
            print(f"  {label:55s} default {values['default']:.6f}  spread {spread:.2e}  vs cache {cached}  "
                  + "  ".join(f"{v}={values[v]:.6f}" for v in args.variants if v in values and v != "default"))
    if args.out:
        Path(args.out).write_text(json.dumps({name: [{"key": dict(k), **v} for k, v in table.items()]
                                              for name, table in report.items()}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
