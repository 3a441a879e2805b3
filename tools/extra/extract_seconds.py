#!/usr/bin/env python3
"""BVLC's extract_seconds.py: for every line of a caffe log that has glog's time prefix, the
seconds since the solver started (its "Solving ..." line), one number per line:

    extract_seconds.py INPUT_LOG OUTPUT_FILE
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_log import timed_lines  # noqa: E402


def extract_seconds(input_file, output_file):
    with open(output_file, 'w') as output:
        for seconds, _ in timed_lines(input_file):
            if seconds is not None:
                output.write('{:f}\n'.format(seconds))


def main(argv):
    if len(argv) != 3:
        print('Usage: extract_seconds.py input_file output_file', file=sys.stderr)
        return 1
    if not os.path.isfile(argv[1]):
        print('extract_seconds.py: no such log file: ' + argv[1], file=sys.stderr)
        return 1
    extract_seconds(argv[1], argv[2])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
