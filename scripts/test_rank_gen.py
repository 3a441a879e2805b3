#!/usr/bin/env python3
"""Tests of scripts/rank_gen.py (run by ctest as rank_gen_py; standard library only).

IBM's own 4x2x3 and 4x2x1 rank files are reproduced line for line; cores per socket follow the
flags (8-core chips) or this machine; every rank appears exactly once, on the host DDL's
topology puts it; mistakes are one clear line and exit status 2; and where Open MPI is installed,
mpirun accepts a generated file.
"""

import datetime
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "rank_gen.py")
sys.path.insert(0, HERE)
import rank_gen  # noqa: E402

# SEED_EXAMPLES.md: `python rank_gen.py 4x2x3 sys-89074,...,sys-89079` on 2 sockets x 10 cores.
IBM_HOSTS = ["sys-89074", "sys-89075", "sys-89076", "sys-89077", "sys-89078", "sys-89079"]
IBM_4X2X3 = """#2017-09-14 04:45:51 by rank_gen
#dims = 4x2x3
#host = sys-89074,sys-89075,sys-89076,sys-89077,sys-89078,sys-89079
#dimX = 4
#dimY = 2
#dimZ = 3
#sockets = 2
#cores = 10
rank 0=sys-89074 slot=0:0-4
rank 6=sys-89074 slot=0:5-9
rank 12=sys-89074 slot=1:0-4
rank 18=sys-89074 slot=1:5-9
rank 3=sys-89075 slot=0:0-4
rank 9=sys-89075 slot=0:5-9
rank 15=sys-89075 slot=1:0-4
rank 21=sys-89075 slot=1:5-9
rank 1=sys-89076 slot=0:0-4
rank 7=sys-89076 slot=0:5-9
rank 13=sys-89076 slot=1:0-4
rank 19=sys-89076 slot=1:5-9
"""
# ... and hosts 3..6 hold ranks 1,7,13,19 / 4,10,16,22 / 2,8,14,20 / 5,11,17,23.
IBM_LATER_HOSTS = {"sys-89077": [4, 10, 16, 22], "sys-89078": [2, 8, 14, 20],
                   "sys-89079": [5, 11, 17, 23]}


def run(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True)


def ranks_by_host(text):
    hosts = {}
    for rank, host, slot in re.findall(r"^rank (\d+)=(\S+) slot=(\S+)$", text, re.M):
        hosts.setdefault(host, []).append((int(rank), slot))
    return hosts


class RankGenTest(unittest.TestCase):

    def test_reproduces_ibms_4x2x3_file(self):
        when = datetime.datetime(2017, 9, 14, 4, 45, 51)
        text = rank_gen.rank_file((4, 2, 3), IBM_HOSTS, 2, 10, now=when)
        self.assertTrue(text.startswith(IBM_4X2X3), text)
        hosts = ranks_by_host(text)
        for host, ranks in IBM_LATER_HOSTS.items():
            self.assertEqual([rank for rank, _ in hosts[host]], ranks)
            self.assertEqual([slot for _, slot in hosts[host]], ["0:0-4", "0:5-9", "1:0-4", "1:5-9"])

    def test_two_hosts_of_four_interleave_ranks(self):
        result = run("4x2x1", "hostA,hostB", "--sockets", "2", "--cores", "10")
        self.assertEqual(result.returncode, 0, result.stderr)
        hosts = ranks_by_host(result.stdout)
        self.assertEqual([rank for rank, _ in hosts["hostA"]], [0, 2, 4, 6])
        self.assertEqual([rank for rank, _ in hosts["hostB"]], [1, 3, 5, 7])
        self.assertEqual([slot for _, slot in hosts["hostA"]], ["0:0-4", "0:5-9", "1:0-4", "1:5-9"])

    def test_cores_per_socket_come_from_the_flag(self):
        hosts = ranks_by_host(run("4x2", "a,b", "--sockets", "2", "--cores", "8").stdout)
        self.assertEqual([slot for _, slot in hosts["a"]], ["0:0-3", "0:4-7", "1:0-3", "1:4-7"])
        hosts = ranks_by_host(run("3", "a", "--sockets", "1", "--cores", "7").stdout)
        self.assertEqual([slot for _, slot in hosts["a"]], ["0:0-1", "0:2-3", "0:4-5"])

    def test_every_rank_once_on_the_host_ddl_expects(self):
        for dims in [(1, 1, 1), (2, 2, 1), (2, 1, 2), (3, 2, 2), (4, 3, 2)]:
            x_size, y_size, z_size = dims
            names = ["n%d" % i for i in range(y_size * z_size)]
            text = rank_gen.rank_file(dims, names, 2, 12)
            hosts = ranks_by_host(text)
            ranks = sorted(rank for pairs in hosts.values() for rank, _ in pairs)
            self.assertEqual(ranks, list(range(x_size * y_size * z_size)), dims)
            for index, name in enumerate(names):
                for rank, _ in hosts[name]:
                    # DdlTopology::coordinate: y = (r / Z) % Y, z = r % Z, host = z * Y + y.
                    y, z = (rank // z_size) % y_size, rank % z_size
                    self.assertEqual(z * y_size + y, index, (dims, rank))

    def test_defaults_to_this_machines_layout(self):
        sockets, cores = rank_gen.machine_layout()
        self.assertGreaterEqual(sockets, 1)
        self.assertGreaterEqual(cores, 1)
        result = run("1", "only")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("#sockets = %d\n#cores = %d\n" % (sockets, cores), result.stdout)
        self.assertIn("#dims = 1x1x1\n", result.stdout)

    def test_mistakes_are_one_clear_line(self):
        cases = [
            (["4x2x3", "a,b"], "4x2x3 needs Y*Z = 6 host names, got 2: a,b"),
            (["4x0", "a"], "dimensions '4x0' are not of the form"),
            (["4y2", "a"], "dimensions '4y2' are not of the form"),
            (["2x2x2x2", "a"], "dimensions '2x2x2x2'"),
            (["2x2", "a,a"], "a host is listed twice"),
            (["2x2", "a,"], "empty host name"),
            (["8", "a", "--sockets", "1", "--cores", "4"], "8 learners per host do not fit"),
            (["2", "a", "--cores", "0"], "--sockets and --cores must be at least 1"),
        ]
        for args, message in cases:
            result = run(*args)
            self.assertEqual(result.returncode, 2, args)
            self.assertEqual(result.stdout, "", args)
            self.assertIn(message, result.stderr, args)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    @unittest.skipUnless(shutil.which("mpirun"), "Open MPI is not installed")
    def test_open_mpi_accepts_the_file(self):
        sockets, cores = rank_gen.machine_layout()
        learners = min(2, sockets * cores)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "job.rf")
            with open(path, "w") as out:
                out.write(rank_gen.rank_file((learners, 1, 1), [socket.gethostname()], sockets,
                                             cores))
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            result = subprocess.run(["mpirun", "-n", str(learners), "-rf", path, "true"], env=env,
                                    capture_output=True, text=True, timeout=120)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main()
