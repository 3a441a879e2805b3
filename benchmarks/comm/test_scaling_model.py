#!/usr/bin/env python3
"""Tests of benchmarks/comm/scaling_model.py (ctest scaling_model_py; standard library only).

The fit recovers known alpha and beta from synthetic timings; the step simulation gives the
closed forms of docs/DDL.md on hand-computed cases (ring, rcs with and without a fold, a
hierarchical mode with shared host links); allreduce_perf's table and the model nets parse.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import net_costs  # noqa: E402
import scaling_model as sm  # noqa: E402

ALPHA, BETA = 1.0, 0.001


def uniform(alpha=ALPHA, beta=BETA, beta_exchange=None):
    tier1 = (alpha, beta) if beta_exchange is None else (alpha, beta, beta_exchange)
    return sm.Network({a: {0: (alpha, beta), 1: tier1} for a in ("ring", "rcs", "mpi", "nccl")})


class FitTest(unittest.TestCase):
    def test_recovers_alpha_and_beta(self):
        alpha, beta = 4e-3, 16e-9
        points = [(2, n, 2 * alpha + n * beta) for n in (4096, 1 << 20, 1 << 24, 1 << 26)]
        fitted = sm.fit_alpha_beta(points)
        self.assertAlmostEqual(fitted[0] / alpha, 1, places=9)
        self.assertAlmostEqual(fitted[1] / beta, 1, places=9)

    def test_noisy_points_stay_close(self):
        alpha, beta = 50e-6, 0.2e-9
        points = [(2, n, (2 * alpha + n * beta) * (1 + (0.02 if i % 2 else -0.02)))
                  for i, n in enumerate(1 << k for k in range(12, 27, 2))]
        fitted = sm.fit_alpha_beta(points)
        self.assertLess(abs(fitted[0] / alpha - 1), 0.1)
        self.assertLess(abs(fitted[1] / beta - 1), 0.05)

    def test_alpha_is_never_negative(self):
        points = [(2, n, n * 1e-9 - 1e-7) for n in (1 << 20, 1 << 22, 1 << 24)]
        self.assertEqual(sm.fit_alpha_beta(points)[0], 0.0)


class CostTest(unittest.TestCase):
    def test_ring_inside_a_host(self):
        # 2(P-1) alpha + 2(P-1)/P n beta = 6 + 1.5 * 4000 * 0.001 = 12.
        seconds = sm.flat_seconds("ring", sm.Topology(4), 4000, uniform())
        self.assertAlmostEqual(seconds, 12.0)

    def test_rcs_power_of_two(self):
        # 2 log2(P) alpha + 2(P-1)/P n beta = 4 + 6 = 10.
        self.assertAlmostEqual(sm.flat_seconds("rcs", sm.Topology(4), 4000, uniform()), 10.0)

    def test_rcs_with_a_fold(self):
        # P = 3: fold n, halve n/2, unfold n/3; gather: fold n/3, double n/2, unfold n:
        # 6 alpha + (2n + n + 2n/3) beta = 6 + 11 = 17 with n = 3000.
        self.assertAlmostEqual(sm.flat_seconds("rcs", sm.Topology(3), 3000, uniform()), 17.0)

    def test_flat_ring_across_hosts_shares_the_links(self):
        # 2 hosts x 2 learners, IBM's layout: every hop of the ring crosses, two flows a link.
        net = sm.Network(uniform().params, link_beta=0.001)
        seconds = sm.flat_seconds("ring", sm.Topology(2, 2), 4000, net)
        self.assertAlmostEqual(seconds, 6 * (1 + 1000 * 0.002))

    def test_hierarchical_mode(self):
        # r:2x2 with tier 0 (alpha 1, beta 0.001) and tier 1 (alpha 10, exchanges 0.01):
        # reduce-scatter inside 1 + 2000 * 0.001 = 3; the shard (2000) across 2 hosts, two
        # exchanges of 1000 by the two learners of each host at once: 2 * (10 + 1000 * 0.02)
        # = 60; allgather inside 3. Total 66.
        net = sm.Network({"ring": {0: (1.0, 0.001), 1: (10.0, 0.005, 0.01)}}, link_beta=0.002)
        seconds, chosen = sm.mode_seconds("r", sm.Topology(2, 2), 4000, net)
        self.assertAlmostEqual(seconds, 66.0)
        self.assertEqual(chosen, ["ring", "ring"])

    def test_mode_b_takes_the_fastest_across(self):
        net = uniform()
        net.params["rcs"][1] = (0.1, BETA)
        _, chosen = sm.mode_seconds("b", sm.Topology(2, 8), 1000, net)
        self.assertEqual(chosen, ["ring", "rcs"])

    def test_groups_follow_ibm_layout(self):
        topology = sm.Topology(4, 2)
        self.assertEqual(topology.groups(0), [[0, 2, 4, 6], [1, 3, 5, 7]])
        self.assertEqual(topology.groups(1), [[0, 1], [2, 3], [4, 5], [6, 7]])
        self.assertEqual([topology.host(r) for r in range(8)], [0, 1] * 4)


SAMPLE = """# allreduce_perf: 4 processes, float in host memory, 5 iterations after 1 warm-up, check on
#      size(B)        count                        ring                     b:2x2 (-mode)
#                                 time   algbw   busbw #x       time   algbw   busbw #x
       1048576       262144    67205.3   0.016   0.023  0    24190.6   0.043   0.065  0
      67108864     16777216  1882434.8   0.036   0.053  0  1139985.0   0.059   0.088  0
"""


class ParseTest(unittest.TestCase):
    def test_allreduce_perf_table(self):
        results = sm.parse_allreduce_perf(SAMPLE)
        self.assertEqual(sorted(results), ["b:2x2", "ring"])
        self.assertEqual(results["ring"][1], (67108864, 1.8824348))
        self.assertAlmostEqual(results["b:2x2"][0][1], 0.0241906)

    def test_rate_of_a_layout_line(self):
        self.assertAlmostEqual(sm.rate_beta(["# layout h2x2: 2 hosts x 2 learners, 1gbit "
                                             "between hosts"]), 8e-9)
        self.assertAlmostEqual(sm.rate_beta(["# layout h2x1: ..., 500mbit between hosts"]), 16e-9)

    def test_model_nets(self):
        unet = sm.net_layers(os.path.join(ROOT, "models/unet3d/deploy.prototxt"))
        # models/unet3d/readme.md: 19,068,227 convolution weights and biases.
        conv = sum(p for name, p, _ in unet if "bn" not in name and "scale" not in name)
        self.assertEqual(conv, 19068227)
        resnet = sm.net_layers(os.path.join(ROOT, "models/resnet50/deploy.prototxt"))
        params = sum(p for _, p, _ in resnet)
        self.assertLess(abs(params / 25.6e6 - 1), 0.01)
        self.assertLess(abs(sum(m for _, _, m in resnet) / 3.86e9 - 1), 0.01)


TRAIN_LOG = """netns_cluster: 2 hosts x 2 learners, 1gbit between hosts
== caffe train -ddl "-mode b:2x2 -dump_iter 10"
DDL dump at iteration 10 (mean of 10 iterations): allreduce end-to-end 550.000 ms for 16.64 MB \
in 2 bucket(s); training waited 540.000 ms for communication
    max jitter: learner 2 (host ddlsim0), forward+backward 90.000 ms, 15.181 ms behind the fastest
DDL dump at iteration 20 (mean of 10 iterations): allreduce end-to-end 501.490 ms for 16.64 MB \
in 2 bucket(s); training waited 496.078 ms for communication
    max jitter: learner 2 (host ddlsim0), forward+backward 83.314 ms, 15.181 ms behind the fastest
""".replace("\\\n", "")

MLP = """net_param { layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 8 dim: 64 } shape { dim: 8 } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
    inner_product_param { num_output: 4096 } }
  layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
    inner_product_param { num_output: 1000 } } }"""


class TrainLogTest(unittest.TestCase):
    def test_dumps_of_each_mode(self):
        layout, header, runs = sm.parse_train_log(TRAIN_LOG)
        self.assertEqual(layout, (2, 2))
        self.assertAlmostEqual(sm.rate_beta(header), 8e-9)
        self.assertEqual([mode for mode, _ in runs], ["b:2x2"])
        for got, want in zip(runs[0][1][1], [0.50149, 0.496078, 0.083314, 16.64, 2]):
            self.assertAlmostEqual(got, want)

    def test_dummy_data_net(self):
        layers = sm.net_layers(None, net_costs.parse_prototxt(MLP)["net_param"][0])
        self.assertEqual(layers, [("ip1", 266240, 262144), ("ip2", 4097000, 4096000)])


class IterationTest(unittest.TestCase):
    LAYERS = [("a", 1 << 20, 10), ("b", 1 << 20, 10), ("c", 3 << 20, 20)]

    def test_buckets_in_backward_order(self):
        # 4 MiB buckets of 4-byte parameters: c (12 MiB) alone, then a and b (4 MiB each).
        self.assertEqual(sm.buckets(self.LAYERS, 4 << 20), [(12 << 20, 2), (4 << 20, 1),
                                                              (4 << 20, 0)])

    def test_overlap(self):
        # Backward 4 s over macs 20, 10, 10: c done at 2, b at 3, a at 4.
        free = sm.iteration_seconds(self.LAYERS, 2.0, 4.0, lambda n: 0.0, 4 << 20)
        self.assertEqual(free, (6.0, 0.0, 2.0))
        # Each bucket 1.5 s: c 2 -> 3.5, b 3.5 -> 5, a 5 -> 6.5: 2.5 s exposed, 4.5 s end to end.
        self.assertEqual(sm.iteration_seconds(self.LAYERS, 2.0, 4.0, lambda n: 1.5, 4 << 20),
                         (8.5, 2.5, 4.5))


if __name__ == "__main__":
    unittest.main()
