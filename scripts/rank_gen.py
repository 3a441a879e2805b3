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

Inside an LSF or Slurm job, --from-scheduler takes the hosts from the job instead of a list:

    python3 scripts/rank_gen.py 4x2 --from-scheduler > 4x2.rf   # in bsub -n 8 -R "span[ptile=4]"

LSF: LSB_DJOB_HOSTFILE (one line per slot) where that file can be read, else LSB_MCPU_HOSTS
("hostA 4 hostB 4"). Slurm: SLURM_JOB_NODELIST (or SLURM_NODELIST, as "node[01-04,07],login3")
with SLURM_TASKS_PER_NODE ("4(x2)") or else SLURM_NTASKS_PER_NODE. Every host must have X slots
(tasks), and there must be Y*Z hosts, in the job's order; anything else is refused, naming the
variable. Where LSF lists a launch host first (as on clusters whose jobs start on a batch node),
a list of one host more than Y*Z whose first host alone differs leaves that host out.
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


# LSF's and Slurm's job variables, in the order --from-scheduler looks for them.
SCHEDULER_VARIABLES = ("LSB_DJOB_HOSTFILE", "LSB_MCPU_HOSTS", "SLURM_JOB_NODELIST", "SLURM_NODELIST")


def shown(value, limit=80):
    """value quoted for a message, cut to `limit` characters."""
    return "'%s'" % (value if len(value) <= limit else value[:limit - 3] + "...")


def expand_bracket(body):
    """'01-03,7' (a bracket of a Slurm host list) -> ['01', '02', '03', '7']."""
    values = []
    for item in body.split(","):
        bounds = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", item)
        if not bounds:
            raise ValueError("'[%s]' holds '%s', which is neither a number nor a range such as "
                             "01-04" % (body, item))
        first, last = bounds.group(1), bounds.group(2) or bounds.group(1)
        if int(last) < int(first):
            raise ValueError("the range '%s-%s' runs backwards" % (first, last))
        # A range keeps the width of its first bound: [08-10] is 08, 09, 10.
        values.extend("%0*d" % (len(first), n) for n in range(int(first), int(last) + 1))
    return values


def expand_nodelist(text):
    """Slurm's host list 'node[01-02,07],gpu-a[1-2]x,login3' -> node01, node02, node07, gpu-a1x,
    gpu-a2x, login3: names apart by commas (or spaces) outside brackets, each bracket a list of
    numbers and ranges; a name with several brackets stands for every combination."""
    pieces, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            depth += 1
            if depth > 1:
                raise ValueError("brackets inside brackets")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError("a ']' without its '['")
        elif depth == 0 and (char == "," or char.isspace()):
            pieces.append(current)
            current = ""
            continue
        current += char
    if depth:
        raise ValueError("a '[' without its ']'")
    pieces.append(current)
    if not any(pieces):
        raise ValueError("no host names")
    names = []
    for piece in filter(None, pieces):
        parts = re.split(r"\[([^\]]*)\]", piece)  # text, bracket, text, bracket, ..., text
        expansions = [""]
        for index, part in enumerate(parts):
            options = expand_bracket(part) if index % 2 else [part]
            expansions = [name + option for name in expansions for option in options]
        names.extend(expansions)
    return names


def expand_tasks_per_node(text):
    """Slurm's SLURM_TASKS_PER_NODE '2(x3),1' -> [2, 2, 2, 1]."""
    counts = []
    for item in text.split(","):
        count = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", item)
        if not count:
            raise ValueError("'%s' is not a count or a count(xN)" % item)
        counts.extend([int(count.group(1))] * int(count.group(2) or 1))
    return counts


def count_in_order(names):
    """['a', 'a', 'b'] -> [('a', 2), ('b', 1)], hosts in the order they first appear."""
    slots = {}
    for name in names:
        slots[name] = slots.get(name, 0) + 1
    return list(slots.items())


def scheduler_allocation(env):
    """The hosts of the LSF or Slurm job that `env` describes, with their slots (tasks):
    (where the hosts come from, where the slots come from, [(host, slots)...]), each 'from'
    naming the variable and its value, for messages."""
    hostfile = env.get("LSB_DJOB_HOSTFILE")
    if hostfile and os.access(hostfile, os.R_OK):
        try:
            with open(hostfile) as lines:
                names = [line.strip() for line in lines if line.strip()]
        except OSError as error:
            raise ValueError("LSB_DJOB_HOSTFILE %s: %s" % (hostfile, error.strerror))
        source = "LSB_DJOB_HOSTFILE %s" % hostfile
        if not names:
            raise ValueError("%s lists no hosts" % source)
        return source, source, count_in_order(names)
    mcpu = env.get("LSB_MCPU_HOSTS")
    if mcpu:
        source = "LSB_MCPU_HOSTS %s" % shown(mcpu)
        words = mcpu.split()
        if not words or len(words) % 2 or not all(count.isdigit() for count in words[1::2]):
            raise ValueError("%s is not a list of host and slot count pairs (as in 'hostA 4 "
                             "hostB 4')" % source)
        return source, source, list(zip(words[0::2], map(int, words[1::2])))
    if hostfile:
        raise ValueError("LSB_DJOB_HOSTFILE %s cannot be read, and LSB_MCPU_HOSTS is not set"
                         % hostfile)
    nodelist_variable = next((name for name in ("SLURM_JOB_NODELIST", "SLURM_NODELIST")
                              if env.get(name)), None)
    if not nodelist_variable:
        raise ValueError("--from-scheduler: no LSF or Slurm job here (none of %s is set); run it "
                         "inside the job, or give the host names" % ", ".join(SCHEDULER_VARIABLES))
    nodelist = env[nodelist_variable]
    nodes_from = "%s %s" % (nodelist_variable, shown(nodelist))
    try:
        nodes = expand_nodelist(nodelist)
    except ValueError as error:
        raise ValueError("%s: %s" % (nodes_from, error))
    tasks = env.get("SLURM_TASKS_PER_NODE")
    if tasks:
        tasks_from = "SLURM_TASKS_PER_NODE %s" % shown(tasks)
        try:
            counts = expand_tasks_per_node(tasks)
        except ValueError as error:
            raise ValueError("%s: %s" % (tasks_from, error))
        if len(counts) != len(nodes):
            raise ValueError("%s gives counts for %d nodes, but %s holds %d"
                             % (tasks_from, len(counts), nodes_from, len(nodes)))
    elif env.get("SLURM_NTASKS_PER_NODE"):
        tasks = env["SLURM_NTASKS_PER_NODE"]
        tasks_from = "SLURM_NTASKS_PER_NODE %s" % shown(tasks)
        if not tasks.strip().isdigit():
            raise ValueError("%s is not a count of tasks" % tasks_from)
        counts = [int(tasks)] * len(nodes)
    else:
        raise ValueError("%s is set, but neither SLURM_TASKS_PER_NODE nor SLURM_NTASKS_PER_NODE "
                         "is: submit with --ntasks-per-node=X" % nodelist_variable)
    return nodes_from, tasks_from, list(zip(nodes, counts))


def scheduler_hosts(dims, env):
    """The Y*Z host names of the job in `env` for dims (X, Y, Z), each host with X slots, and
    the notes to show; ValueError for an uneven job or one that does not match the dims."""
    x_size, y_size, z_size = dims
    hosts_from, slots_from, allocation = scheduler_allocation(env)
    label = "x".join(map(str, dims))
    word = "slots" if hosts_from.startswith("LSB_") else "tasks"
    advice = ("bsub -n %d -R \"span[ptile=%d]\"" % (x_size * y_size * z_size, x_size)
              if word == "slots" else "sbatch -N %d --ntasks-per-node=%d" % (y_size * z_size,
                                                                               x_size))
    notes = []
    # Clusters whose LSF jobs start on a launch (batch) node list it first, with its own count.
    if (word == "slots" and len(allocation) == y_size * z_size + 1 and allocation[0][1] != x_size
            and all(slots == x_size for _, slots in allocation[1:])):
        notes.append("left out %s, the first host of %s, as the job's launch host: it has %d "
                     "slot(s), the %d after it have X = %d each"
                     % (allocation[0][0], hosts_from, allocation[0][1], len(allocation) - 1,
                        x_size))
        allocation = allocation[1:]
    counts = [slots for _, slots in allocation]
    usual = x_size if x_size in counts else max(counts, key=counts.count)
    others = [(host, slots) for host, slots in allocation if slots != usual]
    if others:
        raise ValueError("%s is uneven: %d host(s) have %d %s, but %s; %s needs X = %d on every "
                         "host (%s)" % (slots_from, counts.count(usual), usual, word,
                                        ", ".join("%s has %d" % pair for pair in others[:3])
                                        + (" ..." if len(others) > 3 else ""),
                                        label, x_size, advice))
    if usual != x_size:
        raise ValueError("%s gives %d %s per host, but %s asks for X = %d learners per host (%s)"
                         % (slots_from, usual, word, label, x_size, advice))
    if len(allocation) != y_size * z_size:
        raise ValueError("%s holds %d host(s), but %s asks for Y*Z = %d (%s)"
                         % (hosts_from, len(allocation), label, y_size * z_size, advice))
    return [host for host, _ in allocation], notes


def main(argv, env=os.environ):
    sockets, cores = machine_layout()
    parser = argparse.ArgumentParser(
        description="Write an Open MPI rank file for caffe train -ddl \"-mode a:XxYxZ\".")
    parser.add_argument("dims", help="XxYxZ: learners per host x hosts per group x groups")
    parser.add_argument("hosts", nargs="?",
                        help="comma-separated host names, Y*Z of them, ordered by group")
    parser.add_argument("--from-scheduler", action="store_true",
                        help="take the hosts from the LSF or Slurm job this runs in, instead of "
                             "a list (LSB_DJOB_HOSTFILE or LSB_MCPU_HOSTS; SLURM_JOB_NODELIST "
                             "with SLURM_TASKS_PER_NODE or SLURM_NTASKS_PER_NODE)")
    parser.add_argument("--sockets", type=int, default=sockets,
                        help="sockets per host (default: this machine's, %d)" % sockets)
    parser.add_argument("--cores", type=int, default=cores,
                        help="cores per socket (default: this machine's, %d)" % cores)
    args = parser.parse_args(argv)
    notes = []
    try:
        if args.sockets < 1 or args.cores < 1:
            raise ValueError("--sockets and --cores must be at least 1")
        dims = parse_dims(args.dims)
        if args.from_scheduler and args.hosts is not None:
            raise ValueError("give the host names or --from-scheduler, not both")
        if args.from_scheduler:
            hosts, notes = scheduler_hosts(dims, env)
        elif args.hosts is None:
            raise ValueError("no host names: give Y*Z of them, comma-separated, or "
                             "--from-scheduler inside an LSF or Slurm job")
        else:
            hosts = args.hosts.split(",")
        text = rank_file(dims, hosts, args.sockets, args.cores)
    except ValueError as error:
        sys.stderr.write("rank_gen.py: error: %s\n" % error)
        return 2
    for note in notes:
        sys.stderr.write("rank_gen.py: note: %s\n" % note)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
