#!/usr/bin/env python3
"""Parses a caffe training log (the glog output of `caffe train`, ours or BVLC's) into two
tables, as BVLC's tools/extra/parse_log.py does:

    parse_log.py LOGFILE OUTPUT_DIR [--delimiter ,] [--verbose]

writes OUTPUT_DIR/<LOGFILE name>.train and .test, CSV files with the columns NumIters, Seconds
(since the solver started), LearningRate, then one column per net output (loss, accuracy, ...):
a train row per display interval ("Train net output #k: name = value"), a test row per test
pass ("Test net output #k: name = value"). From Python: parse_log(path) returns the two lists of
rows (dicts in column order).
"""
import argparse
import csv
import datetime
import os
import re
import sys
from collections import OrderedDict

# glog's line prefix: severity, [year (glog >= 0.6),] month, day, time: I0509 03:31:22.123456
# or I20240509 03:31:22.123456.
_GLOG_TIME = re.compile(r'^[IWEF](\d{4})?(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})')
_ITERATION = re.compile(r'Iteration (\d+)')
_LEARNING_RATE = re.compile(r'Iteration (\d+), lr = ([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)')
_OUTPUT = re.compile(r'(Train|Test) net output #(\d+): (\S+) = '
                     r'([-+]?(?:nan|inf|[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))', re.IGNORECASE)
_START = re.compile(r'Solving |Starting Optimization')


def _log_time(line, year):
    """The datetime of a glog line, or None for lines without glog's prefix."""
    match = _GLOG_TIME.match(line)
    if not match:
        return None
    logged_year, month, day, hour, minute, second, micro = match.groups()
    try:
        return datetime.datetime(int(logged_year) if logged_year else year, int(month), int(day),
                                 int(hour), int(minute), int(second), int(micro))
    except ValueError:  # e.g. Feb 29 in the wrong year
        return None


def parse_log(path_to_log):
    """Returns (train_rows, test_rows): lists of OrderedDicts with NumIters, Seconds,
    LearningRate and the net outputs, one per display interval / test pass."""
    # glog prints no year: take the file's, and let times run on across New Year.
    year = datetime.datetime.fromtimestamp(os.path.getmtime(path_to_log)).year
    learning_rates = {}  # iteration -> lr, from "Iteration N, lr = x"
    rows = {'Train': [], 'Test': []}
    start = None
    last_time = None
    year_offset = 0
    iteration = None
    with open(path_to_log, errors='replace') as log:
        for line in log:
            time = _log_time(line, year + year_offset)
            if time is not None and last_time is not None and time < last_time - \
                    datetime.timedelta(days=300):
                year_offset += 1
                time = _log_time(line, year + year_offset)
            if time is not None:
                last_time = time
            if start is None and time is not None and _START.search(line):
                start = time
            rate = _LEARNING_RATE.search(line)
            if rate:
                learning_rates[int(rate.group(1))] = float(rate.group(2))
            found = _ITERATION.search(line)
            if found:
                iteration = int(found.group(1))
            output = _OUTPUT.search(line)
            if not output or iteration is None:
                continue
            phase, index, name, value = output.groups()
            table = rows[phase]
            # Output #0 starts a new row (each display / test pass lists its outputs in order).
            if int(index) == 0 or not table or table[-1]['NumIters'] != iteration or \
                    name in table[-1]:
                if start is None:
                    start = time
                seconds = (time - start).total_seconds() if time and start else float('nan')
                table.append(OrderedDict([('NumIters', iteration), ('Seconds', seconds),
                                          ('LearningRate', float('nan'))]))
            table[-1][name] = float(value)
    for table in rows.values():
        for row in table:
            row['LearningRate'] = _learning_rate_at(learning_rates, row['NumIters'])
    return rows['Train'], rows['Test']


def _learning_rate_at(learning_rates, iteration):
    """The rate logged for `iteration`, else the last one before it, else the first after."""
    if iteration in learning_rates:
        return learning_rates[iteration]
    before = [i for i in learning_rates if i <= iteration]
    if before:
        return learning_rates[max(before)]
    after = [i for i in learning_rates if i > iteration]
    return learning_rates[min(after)] if after else float('nan')


def _format(value):
    return repr(value) if isinstance(value, float) else str(value)


def write_csv(output_path, rows, delimiter=','):
    """Writes rows (dicts) as CSV; the columns are the union of the rows' keys, in order."""
    columns = []
    for row in rows:
        columns.extend(key for key in row if key not in columns)
    with open(output_path, 'w', newline='') as output:
        writer = csv.writer(output, delimiter=delimiter, lineterminator='\n')
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_format(row[column]) if column in row else '' for column in columns])


def save_csv_files(logfile_path, output_dir, train_rows, test_rows, delimiter=',',
                   verbose=False):
    """Writes <output_dir>/<log name>.train and .test."""
    name = os.path.basename(logfile_path)
    for suffix, rows in (('.train', train_rows), ('.test', test_rows)):
        path = os.path.join(output_dir, name + suffix)
        write_csv(path, rows, delimiter)
        if verbose:
            print('parse_log: wrote {} rows to {}'.format(len(rows), path))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description='Parse a caffe training log into train and test CSV tables '
                    '(<log>.train and <log>.test).')
    parser.add_argument('logfile_path', help='the log of `caffe train` (glog output)')
    parser.add_argument('output_dir', help='where to write <log>.train and <log>.test')
    parser.add_argument('--delimiter', default=',', help='column delimiter (default: ,)')
    parser.add_argument('--verbose', action='store_true', help='print what was written')
    args = parser.parse_args(argv)
    if not os.path.isfile(args.logfile_path):
        parser.error('no such log file: ' + args.logfile_path)
    if not os.path.isdir(args.output_dir):
        parser.error('no such output folder: ' + args.output_dir)
    train_rows, test_rows = parse_log(args.logfile_path)
    if not train_rows and not test_rows:
        print('parse_log: warning: no "Train/Test net output" lines in ' + args.logfile_path,
              file=sys.stderr)
    save_csv_files(args.logfile_path, args.output_dir, train_rows, test_rows, args.delimiter,
                   args.verbose)
    return 0


if __name__ == '__main__':
    sys.exit(main())
