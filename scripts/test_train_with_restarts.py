#!/usr/bin/env python3
"""Tests of scripts/train_with_restarts.sh (run by ctest as train_with_restarts_sh).

A command that fails twice and then succeeds is run three times and the wrapper exits 0, saying
each restart; one that keeps failing is given up after --max-restarts with its status; Ctrl-C's
and SIGTERM's statuses (130, 143) are never restarted; bad options are one line and status 2.
"""

import os
import subprocess
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_with_restarts.sh")


def run(*args):
    return subprocess.run([SCRIPT] + list(args), capture_output=True, text=True, timeout=60)


class TrainWithRestartsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="restarts")
        self.counter = os.path.join(self.dir, "attempts")

    def failing(self, times, status=1):
        """A command that fails with `status` its first `times` runs, counting them."""
        return ["bash", "-c", 'n=$(cat "$0" 2>/dev/null || echo 0); echo $((n + 1)) > "$0"; '
                '[ "$n" -ge %d ] || exit %d' % (times, status), self.counter]

    def attempts(self):
        with open(self.counter) as f:
            return int(f.read())

    def test_a_command_that_recovers_is_run_until_it_succeeds(self):
        result = run("--max-restarts", "3", "--delay", "0", "--", *self.failing(2))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.attempts(), 3)
        self.assertIn("the command failed with status 1; restart 1 of 3", result.stderr)
        self.assertIn("restart 2 of 3", result.stderr)
        self.assertNotIn("restart 3 of 3", result.stderr)

    def test_a_command_that_keeps_failing_is_given_up(self):
        result = run("--max-restarts", "1", "--delay", "0", "--", *self.failing(5, status=7))
        self.assertEqual(result.returncode, 7)
        self.assertEqual(self.attempts(), 2)
        self.assertIn("failed with status 7 after 1 restart(s); giving up", result.stderr)

    def test_interrupts_and_sigterm_are_not_restarted(self):
        for status in (130, 143):
            if os.path.exists(self.counter):
                os.remove(self.counter)
            result = run("--delay", "0", "--", *self.failing(5, status=status))
            self.assertEqual(result.returncode, status)
            self.assertEqual(self.attempts(), 1)

    def test_mistakes_are_one_line(self):
        for args in (["--max-restarts", "x", "--", "true"], ["--retries", "2", "--", "true"],
                     ["--delay", "0"]):
            result = run(*args)
            self.assertEqual(result.returncode, 2, args)
            lines = result.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, result.stderr)
            self.assertTrue(lines[0].startswith("train_with_restarts.sh: error: "), lines[0])


if __name__ == "__main__":
    unittest.main()
