#!/usr/bin/env python3
"""Tests of scripts/rank_gen.py (run by ctest as rank_gen_py; standard library only).

IBM's own 4x2x3 and 4x2x1 rank files are reproduced line for line; cores per socket follow the
flags (8-core chips) or this machine; every rank appears exactly once, on the host DDL's
topology puts it; mistakes are one clear line and exit status 2; and where Open MPI is installed,
mpirun accepts a generated file. --from-scheduler: LSF's and Slurm's job variables (given as
mappings, or to the command in its environment) give the hosts; uneven or mismatched jobs and
the absence of a job are one line each.
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


def run(*args, env=None):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True,
                          env=env)


def job_env(**variables):
    """This environment without any scheduler's variables, plus `variables`."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("LSB_", "SLURM_"))}
    env.update(variables)
    return env


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


class FromSchedulerTest(unittest.TestCase):

    def test_lsf_hosts_and_slots_from_lsb_mcpu_hosts(self):
        env = {"LSB_MCPU_HOSTS": "hostA 4 hostB 4 hostC 4 hostD 4"}
        self.assertEqual(rank_gen.scheduler_hosts((4, 2, 2), env),
                         (["hostA", "hostB", "hostC", "hostD"], []))

    def test_lsf_hostfile_comes_before_lsb_mcpu_hosts(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "hostfile")
            with open(path, "w") as out:
                out.write("gpu7\ngpu7\ngpu3\ngpu3\n")
            env = {"LSB_DJOB_HOSTFILE": path, "LSB_MCPU_HOSTS": "other 2 another 2"}
            self.assertEqual(rank_gen.scheduler_hosts((2, 2, 1), env), (["gpu7", "gpu3"], []))
            # A hostfile that cannot be read leaves LSB_MCPU_HOSTS, or else says so.
            env["LSB_DJOB_HOSTFILE"] = os.path.join(folder, "gone")
            self.assertEqual(rank_gen.scheduler_hosts((2, 2, 1), env),
                             (["other", "another"], []))
            del env["LSB_MCPU_HOSTS"]
            with self.assertRaisesRegex(ValueError, "gone cannot be read, and LSB_MCPU_HOSTS"):
                rank_gen.scheduler_hosts((2, 2, 1), env)

    def test_lsf_launch_host_listed_first_is_left_out(self):
        env = {"LSB_MCPU_HOSTS": "batch3 1 a01n01 6 a01n02 6"}
        hosts, notes = rank_gen.scheduler_hosts((6, 2, 1), env)
        self.assertEqual(hosts, ["a01n01", "a01n02"])
        self.assertEqual(len(notes), 1)
        self.assertIn("left out batch3, the first host of LSB_MCPU_HOSTS", notes[0])
        # Only when the dims leave no doubt: one host more than Y*Z, the others all with X.
        with self.assertRaisesRegex(ValueError, "is uneven: 2 host.s. have 6 slots, but batch3 "
                                                "has 1"):
            rank_gen.scheduler_hosts((6, 1, 1), env)

    def test_slurm_node_lists_expand_as_slurm_does(self):
        cases = [
            ("node[01-04,07],gpu-a[1-2]x,login3",
             ["node01", "node02", "node03", "node04", "node07", "gpu-a1x", "gpu-a2x", "login3"]),
            ("node[08-10]", ["node08", "node09", "node10"]),
            ("n[8-10]", ["n8", "n9", "n10"]),
            ("tux[098-101]", ["tux098", "tux099", "tux100", "tux101"]),
            ("alpha,beta,gamma", ["alpha", "beta", "gamma"]),
            ("rack[1-2]-node[1-2]", ["rack1-node1", "rack1-node2", "rack2-node1", "rack2-node2"]),
            ("c1 c2", ["c1", "c2"]),
            ("solo", ["solo"]),
        ]
        for text, names in cases:
            self.assertEqual(rank_gen.expand_nodelist(text), names, text)
        for text, message in [("node[1-2", "a '\\[' without its '\\]'"),
                              ("node1-2]", "a '\\]' without its '\\['"),
                              ("node[4-2]", "the range '4-2' runs backwards"),
                              ("node[a-c]", "'a-c', which is neither a number nor a range"),
                              ("bgl[123x456]", "neither a number nor a range"),
                              ("", "no host names")]:
            with self.assertRaisesRegex(ValueError, message, msg=text):
                rank_gen.expand_nodelist(text)

    def test_slurm_tasks_per_node(self):
        self.assertEqual(rank_gen.expand_tasks_per_node("2(x3),1"), [2, 2, 2, 1])
        self.assertEqual(rank_gen.expand_tasks_per_node("4"), [4])
        env = {"SLURM_JOB_NODELIST": "gpu[1-2],gpu[10-11]", "SLURM_TASKS_PER_NODE": "4(x4)"}
        self.assertEqual(rank_gen.scheduler_hosts((4, 2, 2), env),
                         (["gpu1", "gpu2", "gpu10", "gpu11"], []))
        # SLURM_NODELIST (older Slurm) and SLURM_NTASKS_PER_NODE where the others are not set.
        env = {"SLURM_NODELIST": "c[3-4]", "SLURM_NTASKS_PER_NODE": "2"}
        self.assertEqual(rank_gen.scheduler_hosts((2, 2, 1), env), (["c3", "c4"], []))
        with self.assertRaisesRegex(ValueError, "SLURM_TASKS_PER_NODE '2.x3.' gives counts "
                                                "for 3 nodes, but SLURM_JOB_NODELIST 'c.1-2.' "
                                                "holds 2"):
            rank_gen.scheduler_hosts((2, 3, 1), {"SLURM_JOB_NODELIST": "c[1-2]",
                                                 "SLURM_TASKS_PER_NODE": "2(x3)"})
        with self.assertRaisesRegex(ValueError, "neither SLURM_TASKS_PER_NODE nor "
                                                "SLURM_NTASKS_PER_NODE is: submit with "
                                                "--ntasks-per-node=X"):
            rank_gen.scheduler_hosts((2, 2, 1), {"SLURM_JOB_NODELIST": "c[1-2]"})

    def test_command_line_writes_the_jobs_rank_file(self):
        env = job_env(SLURM_JOB_NODELIST="node[01-02]", SLURM_TASKS_PER_NODE="2(x2)")
        result = run("2x2", "--from-scheduler", "--sockets", "1", "--cores", "4", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        self.assertIn("#host = node01,node02\n", result.stdout)
        hosts = ranks_by_host(result.stdout)
        self.assertEqual([rank for rank, _ in hosts["node01"]], [0, 2])
        self.assertEqual([rank for rank, _ in hosts["node02"]], [1, 3])
        self.assertEqual(result.stdout.split("\n", 1)[1],
                         run("2x2", "node01,node02", "--sockets", "1", "--cores", "4",
                             env=env).stdout.split("\n", 1)[1])
        # The launch host's note goes to stderr, the file to stdout.
        result = run("2", "--from-scheduler", "--sockets", "1", "--cores", "2",
                     env=job_env(LSB_MCPU_HOSTS="login1 1 c5 2"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("rank_gen.py: note: left out login1", result.stderr)
        self.assertEqual(sorted(ranks_by_host(result.stdout)), ["c5"])

    def test_uneven_mismatched_and_missing_jobs_are_one_clear_line(self):
        uneven = ("SLURM_TASKS_PER_NODE '2(x3),1' is uneven: 3 host(s) have 2 tasks, but n4 has "
                  "1; 2x4x1 needs X = 2 on every host (sbatch -N 4 --ntasks-per-node=2)")
        cases = [
            (["2x4", "--from-scheduler"],
             dict(SLURM_JOB_NODELIST="n[1-4]", SLURM_TASKS_PER_NODE="2(x3),1"), uneven),
            (["4x2", "--from-scheduler"], dict(LSB_MCPU_HOSTS="a 4 b 2"),
             "LSB_MCPU_HOSTS 'a 4 b 2' is uneven: 1 host(s) have 4 slots, but b has 2"),
            (["4x2", "--from-scheduler"], dict(LSB_MCPU_HOSTS="a 2 b 2"),
             "LSB_MCPU_HOSTS 'a 2 b 2' gives 2 slots per host, but 4x2x1 asks for X = 4 learners "
             "per host (bsub -n 8 -R \"span[ptile=4]\")"),
            (["2x3", "--from-scheduler"], dict(SLURM_JOB_NODELIST="n[1-2]",
                                               SLURM_NTASKS_PER_NODE="2"),
             "SLURM_JOB_NODELIST 'n[1-2]' holds 2 host(s), but 2x3x1 asks for Y*Z = 3"),
            (["2x2", "--from-scheduler"], dict(SLURM_JOB_NODELIST="n[2-1]",
                                               SLURM_NTASKS_PER_NODE="2"),
             "SLURM_JOB_NODELIST 'n[2-1]': the range '2-1' runs backwards"),
            (["2x2", "--from-scheduler"], dict(LSB_MCPU_HOSTS="a b 2"),
             "LSB_MCPU_HOSTS 'a b 2' is not a list of host and slot count pairs"),
            (["2x2", "--from-scheduler"], {},
             "--from-scheduler: no LSF or Slurm job here (none of LSB_DJOB_HOSTFILE, "
             "LSB_MCPU_HOSTS, SLURM_JOB_NODELIST, SLURM_NODELIST is set)"),
            (["2x2", "a,b", "--from-scheduler"], dict(LSB_MCPU_HOSTS="a 2 b 2"),
             "give the host names or --from-scheduler, not both"),
            (["2x2"], {}, "no host names: give Y*Z of them, comma-separated, or "
                          "--from-scheduler"),
        ]
        for args, variables, message in cases:
            result = run(*args, env=job_env(**variables))
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertEqual(result.stdout, "", args)
            self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
            self.assertTrue(result.stderr.startswith("rank_gen.py: error: "), result.stderr)
            self.assertIn(message, result.stderr, args)


if __name__ == "__main__":
    unittest.main()
