"""NumPy/SciPy programs with and without herd: the same script timed under the
system LAPACK (Debian's liblapack.so.3, OpenBLAS) and with
target/release/libherd_lapack.so preloaded, in alternating rounds.

    python3 bench/lapack_numpy.py [--n 4000] [--rounds 5] [--lib target/release/libherd_lapack.so] [--out F.json]

Prints a table of medians (seconds) and herd's speed-up, and writes them
to --out (bench/results/lapack-numpy.json). Run it with Debian's python3 (/usr/bin/python3),
which has python3-numpy and python3-scipy. Each operation is timed in a child
process (one per round and library), after one warm-up call.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

OPS = {
    "numpy.linalg.cholesky": "np.linalg.cholesky(spd)",
    "numpy.linalg.solve (dgesv)": "np.linalg.solve(a, b)",
    "scipy.linalg.lu_factor (dgetrf)": "sl.lu_factor(a, overwrite_a=False)",
    "scipy.linalg.qr, mode='r' (dgeqrf)": "sl.qr(a, mode='r')",
    "scipy.linalg.eigh(a, b) (dsygvd)": "sl.eigh(sym, spd2)",
    "scipy.linalg.eigh(a, b, eigvals_only=True) (dsygvd, jobz N)": "sl.eigh(sym, spd2, eigvals_only=True)",
    "numpy a @ b (cblas_dgemm)": "a @ c",
}

CHILD = r"""
import sys, time, json
import numpy as np, scipy.linalg as sl
n, expr = int(sys.argv[1]), sys.argv[2]
g = np.random.default_rng(1)
a = g.standard_normal((n, n)); b = g.standard_normal((n, 4)); c = g.standard_normal((n, n))
r = g.standard_normal((n, n)); sym = r + r.T
spd = a @ a.T + n * np.eye(n); spd2 = c @ c.T + n * np.eye(n)
eval(expr)
t = time.perf_counter(); eval(expr); print(json.dumps(time.perf_counter() - t))
"""


def run(expr, n, preload):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = preload
    out = subprocess.run(["/usr/bin/python3", "-c", CHILD, str(n), expr], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=4000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--lib", default="target/release/libherd_lapack.so")
    p.add_argument("--only", default="", help="comma-separated substrings of the operations to run")
    p.add_argument("--out", default="bench/results/lapack-numpy.json")
    args = p.parse_args()
    lib = os.path.abspath(args.lib)
    results = {}
    ops = {k: v for k, v in OPS.items() if not args.only or any(s in k for s in args.only.split(","))}
    for name, expr in ops.items():
        system, herd = [], []
        for r in range(args.rounds):
            order = [(system, None), (herd, lib)] if r % 2 == 0 else [(herd, lib), (system, None)]
            for samples, preload in order:
                samples.append(run(expr, args.n, preload))
        ms, mh = statistics.median(system), statistics.median(herd)
        results[name] = {"system": {"median": ms, "samples": system}, "herd": {"median": mh, "samples": herd}, "speedup": ms / mh}
        print(f"{name:40s} system {ms:8.3f} s   herd {mh:8.3f} s   herd speed-up {ms / mh:5.2f}x", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"n": args.n, "rounds": args.rounds, "results": results}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
