#!/usr/bin/env python3
"""The alpha-beta cost model of DDL's allreduce algorithms, calibrated on the network-namespace
cluster and used to predict scaling efficiency to 256 learners (docs/DDL.md, "Scaling: the cost
model against measurement"). Standard library only.

    scaling_model.py calibrate RUNS            # fit alpha, beta per algorithm and tier
    scaling_model.py validate RUNS             # model against every measured cell, 2-8 learners
    scaling_model.py train RUNS LOG NET        # the iteration model against caffe train's dumps
    scaling_model.py predict [--gpus-per-host 4 ...]   # efficiency, ResNet-50 and 3-D U-Net

RUNS is the folder benchmarks/comm/scaling_runs.sh writes (h1x2.txt, h2x1.txt, ...: the
allreduce_perf output of HOSTS x LEARNERS_PER_HOST).

The model is a step simulation. Each algorithm is written as its sequence of steps (the ring's
2(P-1) shifts of n/P, rcs's halving and doubling exchanges and its fold), each step a set of
messages that go at once. A message costs alpha + bytes * beta for the tier it crosses (0: inside
a host, 1: between hosts); between hosts beta is at least load * the link's beta, where load is
how many messages of the step share the busiest host link it uses (the X learners of a host send
their shards across together). A step lasts as long as its slowest message; an allreduce is the
sum of its steps. On one tier without sharing this is the closed form of docs/DDL.md: ring
2(P-1) alpha + 2 (P-1)/P n beta, rcs 2 log2(P) alpha + 2 (P-1)/P n beta (+ the fold), a
hierarchical mode the sum of its stages.

Between hosts, a message whose receiver sends back to its sender in the same step (an exchange:
rcs, and any ring of two) has a beta of its own: on the shaped veth links one exchange already
gets all that the link gives exchanges, while shifts (rings of three or more) get more, one at a
time, and share the configured rate (the figures: docs/DDL.md).

predict runs one training iteration at P learners: forward, then backward with the gradients cut
into buckets (-bucket_kb) reduced one after another as soon as backward has passed their layers
(backward's time spread over the layers by their multiply-adds), beside -bvlc (one allreduce
after backward). Efficiency = forward + backward over the iteration.
"""

import argparse
import math
import os
import re
import sys

from net_costs import net_layers

TIERS = (0, 1)
FIT_LAYOUTS = ((1, 2), (2, 1), (4, 1))  # (hosts, learners a host) that calibrate() reads
ALGORITHMS = ("ring", "rcs", "mpi")
MODE_ALGORITHM = {"r": "ring", "c": "rcs", "m": "mpi"}


# ----------------------------------------------------------------------------------------------
# Steps of each algorithm: a list of steps, each a list of (sender, receiver, bytes), over the
# members' global ranks.


def _ring_steps(members, n, phases):
    p = len(members)
    steps = []
    for _ in range(phases * (p - 1)):
        steps.append([(members[i], members[(i + 1) % p], n / p) for i in range(p)])
    return steps


def _rcs_layout(p):
    power = 1 << (p.bit_length() - 1)
    folded = p - power

    def real(v):
        return 2 * v + 1 if v < folded else v + folded

    return power, folded, real


def _rcs_reduce_scatter(members, n):
    p = len(members)
    power, folded, real = _rcs_layout(p)
    steps = []
    if folded:
        steps.append([(members[2 * i], members[2 * i + 1], n) for i in range(folded)])
    distance = power // 2
    while distance >= 1:
        steps.append([(members[real(v)], members[real(v ^ distance)], n * distance / power)
                      for v in range(power)])
        distance //= 2
    if folded:
        steps.append([(members[2 * i + 1], members[2 * i], n / p) for i in range(folded)])
    return steps


def _rcs_allgather(members, n):
    p = len(members)
    power, folded, real = _rcs_layout(p)
    steps = []
    if folded:
        steps.append([(members[2 * i], members[2 * i + 1], n / p) for i in range(folded)])
    distance = 1
    while distance < power:
        steps.append([(members[real(v)], members[real(v ^ distance)], n * distance / power)
                      for v in range(power)])
        distance *= 2
    if folded:
        steps.append([(members[2 * i + 1], members[2 * i], n) for i in range(folded)])
    return steps


def algorithm_steps(algorithm, members, n, operation):
    """Steps of `operation` (allreduce, reduce_scatter, allgather) of n bytes over members.

    mpi (MPI_Reduce_scatter + MPI_Allgatherv) and nccl are modelled as rings with their own
    alpha and beta: Open MPI's tuned collectives and NCCL's ring for large buffers."""
    if len(members) < 2:
        return []
    if algorithm == "rcs":
        if operation == "reduce_scatter":
            return _rcs_reduce_scatter(members, n)
        if operation == "allgather":
            return _rcs_allgather(members, n)
        return _rcs_reduce_scatter(members, n) + _rcs_allgather(members, n)
    return _ring_steps(members, n, 2 if operation == "allreduce" else 1)


# ----------------------------------------------------------------------------------------------
# Topology (IBM's layout, docs/DDL.md): learner r has x = r / (Y*Z), y = (r / Z) % Y, z = r % Z;
# its host is (y, z).


class Topology:
    def __init__(self, x, y=1, z=1):
        self.dims = (x, y, z)
        self.size = x * y * z

    def host(self, rank):
        _, y, z = self.dims
        return rank % (y * z)

    def rank(self, coords):
        _, y, z = self.dims
        return coords[0] * y * z + coords[1] * z + coords[2]

    def groups(self, dim):
        """The groups of a stage along dim: every learner's fellows differing only there."""
        ranges = [range(d) for d in self.dims]
        ranges[dim] = [None]
        out = []
        for a in ranges[0]:
            for b in ranges[1]:
                for c in ranges[2]:
                    coords = [a, b, c]
                    members = []
                    for i in range(self.dims[dim]):
                        coords[dim] = i
                        members.append(self.rank(coords))
                    out.append(members)
        return out


class Network:
    """Per algorithm and tier: (alpha seconds, beta seconds per byte of one flow), and for tier 1
    optionally a third value, beta of an exchange. link_beta: seconds per byte of a host link's
    capacity, which the crossing messages of a step that leave (or reach) one host share:
    one message takes bytes * max(beta, load * link); exchanges use their own beta as the link's
    (one exchange fills what the shaped link gives exchanges). links: host links a host has.
    staging: seconds per byte to copy the buffer to the host and back (GPU learners under the
    host algorithms), per algorithm."""

    def __init__(self, params, link_beta=None, links=1, staging=None):
        self.params = params  # {algorithm: {tier: (alpha, beta) or (alpha, beta, beta_exchange)}}
        self.link_beta = link_beta
        self.links = links
        self.staging = staging or {}

    def cost(self, algorithm, tier, exchange):
        """(alpha, beta of the flow, beta of the link it shares)."""
        values = self.params[algorithm][tier]
        alpha, beta = values[0], values[1]
        link = beta if self.link_beta is None else self.link_beta
        if exchange and len(values) > 2:
            beta = link = values[2]
        return alpha, beta, link


def steps_seconds(steps, topology, network, algorithm):
    total = 0.0
    for step in steps:
        pairs = {(s, r) for s, r, _ in step}
        out_load, in_load = {}, {}
        for s, r, _ in step:
            hs, hr = topology.host(s), topology.host(r)
            if hs != hr:
                out_load[hs] = out_load.get(hs, 0) + 1
                in_load[hr] = in_load.get(hr, 0) + 1
        slowest = 0.0
        for s, r, size in step:
            hs, hr = topology.host(s), topology.host(r)
            tier = 0 if hs == hr else 1
            alpha, beta, link = network.cost(algorithm, tier, (r, s) in pairs)
            if tier:
                beta = max(beta, link * max(out_load[hs], in_load[hr]) / network.links)
            slowest = max(slowest, alpha + size * beta)
        total += slowest
    return total


def stage_seconds(algorithm, topology, dim, n, operation, network):
    groups = topology.groups(dim)
    steps = []
    if groups and len(groups[0]) > 1:
        per_group = [algorithm_steps(algorithm, g, n, operation) for g in groups]
        steps = [sum((g[i] for g in per_group), []) for i in range(len(per_group[0]))]
    return steps_seconds(steps, topology, network, algorithm)


def flat_seconds(algorithm, topology, n, network):
    """One algorithm over all learners, in rank order (allreduce_perf's -a ring,rcs,mpi)."""
    steps = algorithm_steps(algorithm, list(range(topology.size)), n, "allreduce")
    return steps_seconds(steps, topology, network, algorithm)


def mode_seconds(mode, topology, n, network, inside=None, across=None):
    """-mode a:XxYxZ: reduce-scatter in the first dimension larger than 1, allreduce of the shard
    along the others, allgather in the first. b: `inside` inside a host, the fastest of `across`
    between hosts; p: the fastest everywhere. Returns (seconds, the algorithm of each stage)."""
    dims = [d for d in range(3) if topology.dims[d] > 1]
    if not dims:
        return 0.0, []
    if mode in MODE_ALGORITHM:
        choices = {d: [MODE_ALGORITHM[mode]] for d in dims}
    elif mode == "b":
        choices = {d: list(across or ALGORITHMS) for d in dims}
        choices[0] = [inside or "ring"]
    elif mode == "p":
        choices = {d: list(ALGORITHMS) for d in dims}
    else:
        raise ValueError("unknown mode " + mode)
    chosen = []
    total = 0.0
    first = dims[0]
    if len(dims) == 1:
        best = min((stage_seconds(a, topology, first, n, "allreduce", network), a)
                   for a in choices[first])
        return best[0] + _staging(best[1], n, network), [best[1]]
    best = min((stage_seconds(a, topology, first, n, "reduce_scatter", network)
                + stage_seconds(a, topology, first, n, "allgather", network), a)
               for a in choices[first])
    total += best[0] + _staging(best[1], n, network)
    chosen.append(best[1])
    on_host = best[1] in network.staging
    shard = n / topology.dims[first]
    for d in dims[1:]:
        # A host algorithm after a device one copies the shard to the host and back.
        best = min((stage_seconds(a, topology, d, shard, "allreduce", network)
                    + (0.0 if on_host else _staging(a, shard, network)), a) for a in choices[d])
        total += best[0]
        chosen.append(best[1])
    return total, chosen


def _staging(algorithm, n, network):
    return n * network.staging.get(algorithm, 0.0)


# ----------------------------------------------------------------------------------------------
# allreduce_perf's output


def parse_allreduce_perf(text):
    """{name: [(bytes, seconds), ...]} from allreduce_perf's table; names as in its header
    (ring, rcs, mpi, MPI_Allreduce, b:2x2, ...)."""
    names, results = None, {}
    for line in text.splitlines():
        if line.startswith("#") and "size(B)" in line:
            fields = re.split(r"\s{2,}", line.lstrip("#").strip())
            names = [f.replace(" (-mode)", "") for f in fields[2:]]
            results = {name: [] for name in names}
        elif names and re.match(r"^\s*\d+\s+\d+\s", line):
            values = line.split()
            size = int(values[0])
            for i, name in enumerate(names):
                results[name].append((size, float(values[2 + 4 * i]) * 1e-6))
    return results


def read_runs(folder):
    """{(hosts, learners_per_host): (results, header lines)} for every hHxL.txt in folder."""
    runs = {}
    for name in sorted(os.listdir(folder)):
        match = re.match(r"^h(\d+)x(\d+)\.txt$", name)
        if not match:
            continue
        with open(os.path.join(folder, name)) as f:
            text = f.read()
        header = [line for line in text.splitlines() if line.startswith("# layout")
                  or line.startswith("# start") or line.startswith("# end")]
        runs[(int(match.group(1)), int(match.group(2)))] = (parse_allreduce_perf(text), header)
    return runs


# ----------------------------------------------------------------------------------------------
# Fitting


def fit_alpha_beta(points):
    """Least squares of t = ca * alpha + cb * beta over points (ca, cb, t), each residual
    relative to t (so small and large sizes weigh alike); alpha >= 0."""
    saa = sab = sbb = sat = sbt = 0.0
    for ca, cb, t in points:
        w = 1.0 / (t * t)
        saa += w * ca * ca
        sab += w * ca * cb
        sbb += w * cb * cb
        sat += w * ca * t
        sbt += w * cb * t
    det = saa * sbb - sab * sab
    alpha = (sat * sbb - sab * sbt) / det if det else 0.0
    beta = (saa * sbt - sab * sat) / det if det else sbt / sbb
    if alpha < 0:
        alpha, beta = 0.0, sbt / sbb
    return alpha, beta


def calibrate(runs):
    """{algorithm: {tier: (alpha, beta[, beta_exchange])}} from the runs: tier 0 from one host
    of two learners (h1x2), tier 1 from two hosts of one (h2x1: every algorithm is one exchange
    each way, 2 alpha + n beta) and, for the ring's shifts, four hosts of one (h4x1: 6 alpha +
    1.5 n beta)."""
    params = {}
    for algorithm in ALGORITHMS:
        params[algorithm] = {}
        tier0 = runs[(1, 2)][0][algorithm]
        params[algorithm][0] = fit_alpha_beta([(2, n, t) for n, t in tier0])
        tier1 = runs[(2, 1)][0][algorithm]
        alpha, beta_exchange = fit_alpha_beta([(2, n, t) for n, t in tier1])
        beta = beta_exchange
        if algorithm != "rcs" and (4, 1) in runs:
            shifts = runs[(4, 1)][0][algorithm]
            alpha_shift, beta = fit_alpha_beta([(6, 1.5 * n, t) for n, t in shifts])
            alpha = (alpha + alpha_shift) / 2
        params[algorithm][1] = (alpha, beta, beta_exchange)
    return params


# ----------------------------------------------------------------------------------------------
# Validation: every measured cell beside the model


def rate_beta(header):
    """Seconds per byte of the shaped rate in a run's "# layout" line (tc units: 1gbit, 500mbit),
    else None."""
    for line in header:
        match = re.search(r", (\d+(?:\.\d+)?)([kmg]?)bit between hosts", line)
        if match:
            bits = float(match.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[match.group(2)]
            return 8.0 / bits
    return None


def validate(runs, params, min_bytes=1 << 20):
    rows = []
    for (hosts, per_host), (results, header) in sorted(runs.items()):
        network = Network(params, link_beta=rate_beta(header))
        topology = Topology(per_host, hosts)
        for name, points in results.items():
            for n, measured in points:
                if n < min_bytes:
                    continue
                if ":" in name:
                    mode, dims = name.split(":")
                    x, y = (int(v) for v in dims.split("x")[:2])
                    model, chosen = mode_seconds(mode, Topology(x, y), n, network)
                    stages = ", ".join(chosen)
                elif name in ALGORITHMS:
                    model, stages = flat_seconds(name, topology, n, network), ""
                else:
                    continue
                rows.append(((hosts, per_host), name, stages, n, measured, model))
    return rows


# ----------------------------------------------------------------------------------------------
# Prediction: one training iteration at P learners


def buckets(layers, bucket_bytes, dtype_bytes=4):
    """[(bytes, index of the layer after whose backward the bucket is ready)] in backward order:
    parameters in the order backward produces them, cut at bucket_bytes, never inside a layer's
    parameters (docs/DDL.md, -bucket_kb)."""
    out, size, last = [], 0, None
    for index in range(len(layers) - 1, -1, -1):
        b = layers[index][1] * dtype_bytes
        if not b:
            continue
        if size and size + b > bucket_bytes:
            out.append((size, last))
            size = 0
        size += b
        last = index
    if size:
        out.append((size, last))
    return out


def iteration_seconds(layers, forward, backward, allreduce, bucket_bytes):
    """Forward, then backward with each bucket reduced on the communication thread as soon as
    backward has passed its layers (one bucket at a time, in order); backward's time is spread
    over the layers by their multiply-adds. Returns (iteration seconds, exposed communication,
    end-to-end: from the first bucket's start to the last one's end, as -dump_iter's)."""
    total_macs = sum(m for _, _, m in layers) or 1
    done_after = {}
    elapsed = 0.0
    for index in range(len(layers) - 1, -1, -1):
        elapsed += backward * layers[index][2] / total_macs
        done_after[index] = elapsed
    free, first = 0.0, None
    for size, index in buckets(layers, bucket_bytes):
        start = max(free, done_after[index])
        first = start if first is None else first
        free = start + allreduce(size)
    exposed = max(0.0, free - backward)
    return forward + backward + exposed, exposed, free - (first or 0.0)


def predict_table(args, layers, compute, learner_counts, modes):
    """Per learner count: {mode: (efficiency with buckets overlapping backward, exposed seconds,
    efficiency of -bvlc: one allreduce of all gradients after backward)}; compute: seconds of
    forward + backward on one learner, backward two thirds of it."""
    forward, backward = compute / 3, 2 * compute / 3
    total_bytes = 4 * sum(p for _, p, _ in layers)
    network = stated_network(args)
    rows = []
    for p in learner_counts:
        x = min(p, args.gpus_per_host)
        topology = Topology(x, p // x)
        cells = {}
        for mode in modes:
            if mode in ("b", "n"):
                across = ["nccl"] + (list(ALGORITHMS) if mode == "b" else [])
                options = {"inside": "nccl", "across": across}
                mode_letter = "b"
            else:
                options, mode_letter = {}, mode
            memo = {}

            def seconds(n, t=topology, m=mode_letter, o=options, memo=memo):
                if n not in memo:
                    memo[n] = mode_seconds(m, t, n, network, **o)[0]
                return memo[n]

            iteration, exposed, _ = iteration_seconds(layers, forward, backward, seconds,
                                                      args.bucket_kb * 1024)
            cells[mode] = (compute / iteration, exposed,
                           compute / (compute + seconds(total_bytes)))
        rows.append((p, topology.dims, cells))
    return rows


def stated_network(args):
    """The stated cluster: GPU learners, NVLink inside a host for NCCL, host memory (as
    calibrated here, unless given) for the host algorithms of r, c, m, which copy the buffer to
    the host and back; InfiniBand between hosts for all."""
    ib = (args.ib_latency_us * 1e-6, 1 / (args.ib_gbs * 1e9))
    nvlink = (args.nvlink_latency_us * 1e-6, 1 / (args.nvlink_gbs * 1e9))
    host = {}
    if args.runs:
        fitted = calibrate(read_runs(args.runs))
        ring_beta = fitted["ring"][1][1]
        for a in ALGORITHMS:
            # Between hosts: the stated link, times the algorithm's measured cost over the ring's.
            factor = fitted[a][1][1] / ring_beta
            host[a] = {0: fitted[a][0][:2], 1: (ib[0], ib[1] * factor)}
    else:
        for a in ALGORITHMS:
            host[a] = {0: (args.host_latency_us * 1e-6, 1 / (args.host_gbs * 1e9)), 1: ib}
    params = dict(host)
    params["nccl"] = {0: nvlink, 1: ib}
    staging = {a: 2 / (args.pcie_gbs * 1e9) for a in ALGORITHMS}
    return Network(params, links=args.links_per_host, staging=staging)


# ----------------------------------------------------------------------------------------------
# Commands


def _format_params(params):
    lines = ["| algorithm | tier | alpha (us) | beta (ns/B) | bandwidth (MB/s) | beta, exchanges "
             "(ns/B) |", "|---|---|---|---|---|---|"]
    for algorithm in ALGORITHMS:
        for tier in TIERS:
            values = params[algorithm][tier]
            exchange = "%.3f" % (values[2] * 1e9) if len(values) > 2 else ""
            lines.append("| %s | %d | %.1f | %.3f | %.0f | %s |" % (
                algorithm, tier, values[0] * 1e6, values[1] * 1e9, 1e-6 / values[1], exchange))
    return "\n".join(lines)


def command_calibrate(args):
    print(_format_params(calibrate(read_runs(args.runs))))


def command_validate(args):
    runs = read_runs(args.runs)
    params = calibrate(runs)
    rows = validate(runs, params, args.min_bytes)
    sizes = sorted({row[3] for row in rows})
    table = {}
    errors = {}
    for layout, label, stages, n, measured, model in rows:
        table.setdefault((layout, label), {})[n] = (measured, model, stages)
        key = ("fitted" if layout in FIT_LAYOUTS else "predicted") + (
            ", across hosts" if layout[0] > 1 else ", one host")
        errors.setdefault(key, []).append(abs(math.log(model / measured)))
        if n >= 16 << 20:
            errors.setdefault(key + ", 16 MB and up", []).append(abs(math.log(model / measured)))
            if ":" in label and not label.startswith("m:"):
                errors.setdefault(key + ", 16 MB and up, -mode r, c, b", []).append(
                    abs(math.log(model / measured)))
    print("| hosts x learners a host | algorithm or -mode | " + " | ".join(
        "%d MB" % (n >> 20) for n in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for (layout, label), cells in table.items():
        fitted = " (fit)" if layout in FIT_LAYOUTS else ""
        out = []
        for n in sizes:
            if n not in cells:
                out.append("")
                continue
            measured, model, stages = cells[n]
            out.append("%s / %s (%.2f%s)" % (_ms(measured), _ms(model), model / measured,
                                            "; " + stages if label.startswith("b:") else ""))
        print("| %dx%d%s | %s | " % (layout[0], layout[1], fitted, label) + " | ".join(out) + " |")
    print("# cells: measured / model ms (model / measured); -mode b: the stages the model picks")
    for key, values in sorted(errors.items()):
        mean = math.exp(sum(values) / len(values))
        worst = math.exp(max(values))
        print("# %s: %d cells, error factor max(model/measured, measured/model): geometric mean "
              "%.2f, worst %.2f" % (key, len(values), mean, worst))
    for (hosts, per_host), (_, header) in sorted(runs.items()):
        print("# h%dx%d: %s" % (hosts, per_host, " / ".join(h.lstrip("# ") for h in header[1:])))


def parse_train_log(text):
    """From netns_cluster.sh's comparison: the cluster ((hosts, learners a host), rate line) and,
    per `caffe train -ddl "-mode M ..."`, its -dump_iter dumps: [(end-to-end s, waited s,
    forward+backward s of the slowest learner, MB, buckets)]."""
    layout, header, runs, mode = None, [], [], None
    for line in text.splitlines():
        match = re.match(r"netns_cluster: (\d+) hosts x (\d+) learners, (\S+) between hosts", line)
        if match:
            layout = (int(match.group(1)), int(match.group(2)))
            header = ["# layout: ..., %s between hosts" % match.group(3)]
        match = re.match(r'== caffe train -ddl "-mode (\S+)', line)
        if match:
            mode = match.group(1)
            runs.append((mode, []))
        match = re.search(r"allreduce end-to-end ([\d.]+) ms for ([\d.]+) MB in (\d+) bucket.*"
                          r"training waited ([\d.]+) ms", line)
        if match and mode:
            runs[-1][1].append([float(match.group(1)) / 1e3, float(match.group(4)) / 1e3, None,
                                float(match.group(2)), int(match.group(3))])
        match = re.search(r"max jitter: .*forward\+backward ([\d.]+) ms", line)
        if match and runs and runs[-1][1]:
            runs[-1][1][-1][2] = float(match.group(1)) / 1e3
    return layout, header, runs


def command_train(args):
    """The iteration model against `caffe train -ddl` on the cluster: each -mode's dumps (the
    first, with the start-up, left out when there are more) beside the model's end-to-end and
    exposed communication for the net's buckets, forward+backward taken from the dump."""
    params = calibrate(read_runs(args.runs))
    with open(args.log) as f:
        layout, header, runs = parse_train_log(f.read())
    layers = net_layers(args.net)
    network = Network(params, link_beta=rate_beta(header))
    cluster = Topology(layout[1], layout[0])
    print("| -ddl -mode | dumps | forward+backward (ms) | allreduce end-to-end: measured / model "
          "(ms) | training waited: measured / model exposed (ms) |")
    print("|---|---|---|---|---|")
    for mode, dumps in runs:
        dumps = [d for d in dumps if d[2] is not None]
        if len(dumps) > 1:
            dumps = dumps[1:]
        if not dumps:
            continue
        letter, dims = mode.split(":")
        sizes = [int(v) for v in dims.split("x")]
        if len(sizes) == 1:
            algorithms = [MODE_ALGORITHM[letter]] if letter in MODE_ALGORITHM else ALGORITHMS

            def seconds(n, algorithms=algorithms):
                return min(flat_seconds(a, cluster, n, network) for a in algorithms)
        else:
            topology = Topology(*sizes)

            def seconds(n, letter=letter, topology=topology):
                return mode_seconds(letter, topology, n, network)[0]
        mean = [sum(d[i] for d in dumps) / len(dumps) for i in range(3)]
        compute = mean[2]
        _, exposed, end_to_end = iteration_seconds(layers, compute / 3, 2 * compute / 3, seconds,
                                                   args.bucket_kb * 1024)
        print("| %s | %d | %.0f | %.0f / %.0f (%.2f) | %.0f / %.0f (%.2f) |" % (
            mode, len(dumps), compute * 1e3, mean[0] * 1e3, end_to_end * 1e3,
            end_to_end / mean[0], mean[1] * 1e3, exposed * 1e3, exposed / mean[1]))


def _ms(seconds):
    ms = seconds * 1e3
    return "%.0f" % ms if ms >= 100 else "%.1f" % ms


def command_predict(args):
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    counts = [1 << i for i in range(1, 9)]
    modes = args.modes.split(",")
    print("# network: %d GPUs a host (NCCL over NVLink %.0f GB/s, %.0f us a step), %d link(s) "
          "of %.1f GB/s, %.0f us between hosts; r, c, m: host memory %s, GPU copies %.0f GB/s "
          "each way; buckets of %d KiB" % (
              args.gpus_per_host, args.nvlink_gbs, args.nvlink_latency_us, args.links_per_host,
              args.ib_gbs, args.ib_latency_us,
              "as calibrated in " + args.runs if args.runs else "%.1f GB/s" % args.host_gbs,
              args.pcie_gbs, args.bucket_kb))
    resnet = net_layers(os.path.join(root, "models/resnet50/deploy.prototxt"))
    # One multiply-add is 2 FLOPs, backward twice forward: 6 FLOPs a multiply-add an iteration.
    flops = 6 * sum(m for _, _, m in resnet) * args.resnet_images_per_s
    print("# GPU: ResNet-50 at %.0f images/s (batch %d) = %.2f TFLOPS sustained; the U-Net at "
          "the same rate" % (args.resnet_images_per_s, args.resnet_batch, flops / 1e12))
    unet = net_layers(os.path.join(root, "models/unet3d/deploy.prototxt"))
    scale = (args.unet_size / 64.0) ** 3  # deploy.prototxt's volume is 64^3
    unet = [(n, p, m * scale) for n, p, m in unet]
    for name, layers, batch in (("ResNet-50", resnet, args.resnet_batch),
                                ("3-D U-Net %d^3" % args.unet_size, unet, 1)):
        params = sum(p for _, p, _ in layers)
        sample_macs = sum(m for _, _, m in layers)
        compute = 6 * sample_macs * batch / flops
        rows = predict_table(args, layers, compute, counts, modes)
        print("## %s: %.2f M parameters (%.1f MB of fp32 gradients, %d buckets), %.2f G "
              "multiply-adds a sample, batch %d a learner: %.0f ms forward + backward" % (
                  name, params / 1e6, params * 4 / 1e6,
                  len(buckets(layers, args.bucket_kb * 1024)), sample_macs / 1e9, batch,
                  compute * 1e3))
        print("| learners | XxY | " + " | ".join("`-mode %s`" % m for m in modes) + " |")
        print("|---|---|" + "---|" * len(modes))
        for p, dims, cells in rows:
            print("| %d | %dx%d | " % (p, dims[0], dims[1]) + " | ".join(
                "%.1f / %.1f" % (cells[m][0] * 100, cells[m][2] * 100) for m in modes) + " |")
        print("# efficiency %: buckets during backward (DDL's default) / -bvlc (one allreduce "
              "after backward)")
        print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("calibrate", "validate"):
        p = sub.add_parser(name)
        p.add_argument("runs", help="folder of scaling_runs.sh's outputs (h1x2.txt, ...)")
        p.add_argument("--min-bytes", type=int, default=1 << 20,
                       help="validate: smallest size to compare (default 1 MiB)")
    p = sub.add_parser("train")
    p.add_argument("runs", help="calibration runs (scaling_runs.sh's folder)")
    p.add_argument("log", help="netns_cluster.sh's comparison output (its caffe train dumps)")
    p.add_argument("net", help="the net it trained (a net or solver prototxt)")
    p.add_argument("--bucket-kb", type=int, default=4096)
    p = sub.add_parser("predict")
    p.add_argument("--runs", help="calibrated runs: the host-memory tier and each algorithm's "
                   "cost over the ring's between hosts (default: the --host-* figures)")
    p.add_argument("--gpus-per-host", type=int, default=4)
    p.add_argument("--links-per-host", type=int, default=1)
    p.add_argument("--ib-gbs", type=float, default=12.5, help="GB/s a link, each way")
    p.add_argument("--ib-latency-us", type=float, default=5.0)
    p.add_argument("--nvlink-gbs", type=float, default=40.0,
                   help="NCCL's ring bandwidth inside a host, GB/s")
    p.add_argument("--nvlink-latency-us", type=float, default=5.0)
    p.add_argument("--host-gbs", type=float, default=5.0)
    p.add_argument("--host-latency-us", type=float, default=5.0)
    p.add_argument("--pcie-gbs", type=float, default=11.0,
                   help="GPU-host copies of r, c, m (each way)")
    p.add_argument("--resnet-images-per-s", type=float, default=195,
                   help="one GPU's ResNet-50 training rate at --resnet-batch (default: P100, "
                   "fp32, batch 32, TensorFlow's published benchmark); sets the U-Net's too")
    p.add_argument("--resnet-batch", type=int, default=32)
    p.add_argument("--unet-size", type=int, default=144, help="cube edge of a U-Net volume")
    p.add_argument("--bucket-kb", type=int, default=4096)
    p.add_argument("--modes", default="r,c,m,b,n")
    args = parser.parse_args(argv)
    {"calibrate": command_calibrate, "validate": command_validate, "train": command_train,
     "predict": command_predict}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
