#!/usr/bin/env python3
"""Writes an Open MPI rank file for a DDL job (caffe train -ddl "-mode a:XxYxZ").

    python3 scripts/rank_gen.py 4x2x1 host1,host2 > 4x2.rf
    mpirun -x PATH -x LD_LIBRARY_PATH -n 8 -rf 4x2.rf caffe train -solver s.prototxt -gpu 0 \\
           -ddl "-mode b:4x2x1"

X learners per host, Y hosts per group (rack), Z groups: the host list must have Y*Z names,
ordered by group (the Y hosts of group 0 first). The file has IBM PowerAI's form: comment lines
with the dimensions, hosts and layout, then one `rank R=HOST slot=SOCKET:FIRST-LAST` line per
learner. Ranks are interleaved across hosts the way DDL's topology assumes: learner r sits on
host z*Y + y with y = (r / Z) % Y and z = r % Z, so the learners of a host are r, r + Y*Z, ...
Each host's X learners are spread over its sockets, each bound to its own range of cores.

Sockets and cores per socket default to what this machine reports (/proc/cpuinfo, else lscpu);
give --sockets and --cores when the cluster's nodes differ (too many cores in a rank file makes
mpirun fail with "ORTE_ERROR_LOG: Not found in file rmaps_rank_file.c").
"""

import argparse
import datetime
import os
import re
import subprocess
import sys


def machine_layout():
    """(sockets, cores per socket) of this machine."""
    sockets, cores = set(), None
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "physical id":
                    sockets.add(value)
                elif key == "cpu cores" and value.isdigit():
                    cores = int(value)
    except OSError:
        pass
    if sockets and cores:
        return len(sockets), cores
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        found = dict(re.findall(r"^(Socket\(s\)|Core\(s\) per socket):\s*(\d+)", text, re.M))
        if "Socket(s)" in found and "Core(s) per socket" in found:
            return int(found["Socket(s)"]), int(found["Core(s) per socket"])
    except (OSError, subprocess.CalledProcessError):
        pass
    return 1, os.cpu_count() or 1


def parse_dims(text):
    """'4x2x1' -> (4, 2, 1); 1 to 3 positive sizes, missing ones are 1."""
    parts = text.split("x")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError("dimensions '%s' are not of the form X, XxY or XxYxZ with positive "
                         "integers (as in 4x2x1)" % text)
    dims = [int(p) for p in parts] + [1] * (3 - len(parts))
    return tuple(dims)


def slots(learners, sockets, cores):
    """The 'S:C0-C1' binding of each of a host's learners."""
    if learners > sockets * cores:
        raise ValueError("%d learners per host do not fit on %d socket(s) x %d cores"
                         % (learners, sockets, cores))
    per_socket = -(-learners // sockets)  # ceiling
    width = cores // per_socket
    bindings = []
    for x in range(learners):
        socket, index = divmod(x, per_socket)
        first = index * width
        last = first + width - 1
        bindings.append("%d:%d" % (socket, first) if first == last
                        else "%d:%d-%d" % (socket, first, last))
    return bindings


def rank_file(dims, hosts, sockets, cores, now=None):
    """The rank file's text."""
    x_size, y_size, z_size = dims
    if len(hosts) != y_size * z_size:
        raise ValueError("%s needs Y*Z = %d host names, got %d: %s"
                         % ("x".join(map(str, dims)), y_size * z_size, len(hosts),
                            ",".join(hosts)))
    if any(not host for host in hosts):
        raise ValueError("empty host name in the list: %s" % ",".join(hosts))
    if len(set(hosts)) != len(hosts):
        raise ValueError("a host is listed twice: %s" % ",".join(hosts))
    now = now or datetime.datetime.now()
    lines = [
        "#%s by rank_gen" % now.strftime("%Y-%m-%d %H:%M:%S"),
        "#dims = %s" % "x".join(map(str, dims)),
        "#host = %s" % ",".join(hosts),
        "#dimX = %d" % x_size,
        "#dimY = %d" % y_size,
        "#dimZ = %d" % z_size,
        "#sockets = %d" % sockets,
        "#cores = %d" % cores,
    ]
    bindings = slots(x_size, sockets, cores)
    for index, host in enumerate(hosts):
        y, z = index % y_size, index // y_size
        for x in range(x_size):
            rank = x * y_size * z_size + y * z_size + z
            lines.append("rank %d=%s slot=%s" % (rank, host, bindings[x]))
    return "\n".join(lines) + "\n"


def main(argv):
    sockets, cores = machine_layout()
    parser = argparse.ArgumentParser(
        description="Write an Open MPI rank file for caffe train -ddl \"-mode a:XxYxZ\".")
    parser.add_argument("dims", help="XxYxZ: learners per host x hosts per group x groups")
    parser.add_argument("hosts", help="comma-separated host names, Y*Z of them, ordered by group")
    parser.add_argument("--sockets", type=int, default=sockets,
                        help="sockets per host (default: this machine's, %d)" % sockets)
    parser.add_argument("--cores", type=int, default=cores,
                        help="cores per socket (default: this machine's, %d)" % cores)
    args = parser.parse_args(argv)
    try:
        if args.sockets < 1 or args.cores < 1:
            raise ValueError("--sockets and --cores must be at least 1")
        text = rank_file(parse_dims(args.dims), args.hosts.split(","), args.sockets, args.cores)
    except ValueError as error:
        sys.stderr.write("rank_gen.py: error: %s\n" % error)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
