#!/usr/bin/env python3
"""Times a solver's update step alone (solver.apply_update(): decay, momentum, the step into the
weights), without forward or backward, through pycaffe on the CPU.

    PYTHONPATH=build/python benchmarks/solver_update.py SOLVER [--calls 5] [--repeats 5]

Prints the best over repeats of the mean time of `calls` consecutive updates. The solver's net
must build (../shared/benchmarks/nets have Input layers; benchmarks/denormals.sh writes such a
solver for CaffeNet).
"""
import argparse
import time

import caffe


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('solver', help='solver prototxt')
    parser.add_argument('--calls', type=int, default=5)
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args()
    caffe.set_mode_cpu()
    solver = caffe.get_solver(args.solver)
    solver.step(1)  # every buffer allocated, the history included
    best = float('inf')
    for _ in range(args.repeats):
        start = time.perf_counter()
        for _ in range(args.calls):
            solver.apply_update()
        best = min(best, (time.perf_counter() - start) / args.calls)
    print('%s update: %.1f ms' % (solver.type, best * 1e3))


if __name__ == '__main__':
    main()
