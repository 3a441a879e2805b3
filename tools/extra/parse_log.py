#!/usr/bin/env python3
"""Parses a caffe training log (the glog output of `caffe train`, ours or BVLC's) into two
tables, as BVLC's tools/extra/parse_log.py does:

    parse_log.py LOGFILE OUTPUT_DIR [--delimiter ,] [--verbose] [--tables]

writes OUTPUT_DIR/<LOGFILE name>.train and .test, CSV files with the columns NumIters, Seconds
(since the solver started), LearningRate, then one column per net output (loss, accuracy, ...):
a train row per display interval ("Train net output #k: name = value"), a test row per test
pass ("Test net output #k: name = value"). From Python: parse_log(path) returns the two lists of
rows (dicts in column order).

With --tables it writes the space-aligned tables of BVLC's tools/extra/parse_log.sh instead
(which runs it so): "# Iters Seconds TestAccuracy TestLoss" (test net outputs #0 and #1) and
"# Iters Seconds TrainingLoss LearningRate" (the loss of each display line).
"""
import argparse
import bisect
import csv
import datetime
import os
import re
import sys

# glog's line prefix: severity, [year (glog >= 0.6),] month, day, time: I0509 03:31:22.123456
# or I20240509 03:31:22.123456.
_GLOG_TIME = re.compile(r'^[IWEF](\d{4})?(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})')
_ITERATION = re.compile(r'Iteration (\d+)')
_LEARNING_RATE = re.compile(r'Iteration (\d+), lr = ([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)')
_START = re.compile(r'Solving |Starting Optimization')
# A display line's loss: "Iteration 100 (10 iter/s, 10s/100 iters), loss = 0.5" (BVLC's older
# logs: "Iteration 100, loss = 0.5").
_DISPLAY_LOSS = re.compile(r'Iteration (\d+)(?: \([^)]*\))?, loss = '
                           r'([-+]?(?:nan|inf|[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))', re.IGNORECASE)


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


def _dated_lines(path_to_log):
    """Yields (datetime or None, line). glog prints no year: the file's is taken, and times run
    on across New Year."""
    year = datetime.datetime.fromtimestamp(os.path.getmtime(path_to_log)).year
    last_time = None
    year_offset = 0
    with open(path_to_log, errors='replace') as log:
        for line in log:
            time = _log_time(line, year + year_offset)
            if time is not None and last_time is not None and time < last_time - \
                    datetime.timedelta(days=300):
                year_offset += 1
                time = _log_time(line, year + year_offset)
            if time is not None:
                last_time = time
            yield time, line


def timed_lines(path_to_log):
    """Yields (seconds, line) for every line of the log: the seconds since the solver started
    (its "Solving ..." line; negative before it; in a log without one, since the first timed
    line), None for lines without glog's time prefix."""
    start = first = None
    for time, line in _dated_lines(path_to_log):
        if time is not None:
            first = first or time
            if _START.search(line):
                start = time
                break
    origin = start or first
    for time, line in _dated_lines(path_to_log):
        yield (None if time is None else (time - origin).total_seconds()), line


def _note_learning_rate(line, learning_rates):
    """Records "Iteration N, lr = x" in learning_rates (iteration -> lr)."""
    found = _LEARNING_RATE.search(line)
    if found:
        learning_rates[int(found.group(1))] = float(found.group(2))


def _output(line):
    """(phase, index, name, value) of a "Train net output #0: loss = 0.5 (...)" line, or None;
    string operations, which cost a fraction of a regular expression's search on long logs."""
    head, _, rest = line.partition(' net output #')
    phase = 'Train' if head.endswith('Train') else 'Test' if head.endswith('Test') else None
    index, _, rest = rest.partition(': ')
    name, _, rest = rest.partition(' = ')
    if phase is None or not index.isdigit() or not name or ' ' in name or not rest:
        return None
    try:
        return phase, index, name, float(rest.split(None, 1)[0])
    except ValueError:
        return None


class LogParser(object):
    """Reads a training log line by line (all at once, or as it grows: the web server feeds it
    the lines a running `caffe train` appends) into the rows parse_log returns. Lines that cannot
    matter are rejected by substring tests before any regular expression runs, and only the
    lines that make rows are dated, so a log of 100,000 displayed iterations parses in well under
    a second."""

    def __init__(self, year=None):
        self._year = year or datetime.datetime.now().year
        self._year_offset = 0
        self._last_base = None    # seconds (since the log's first day) of the last new minute
        self._first_time = None   # of the first line with glog's prefix
        self._start_time = None   # of the solver's first "Solving ..." line
        self._minutes = {}        # a line's day and minute -> its seconds at that minute
        self._first_day = None    # its day number (date.toordinal)
        self._iteration = None
        self.learning_rates = {}  # iteration -> lr, from "Iteration N, lr = x"
        self._rate_iterations = None  # its keys, sorted (None: to be sorted)
        self._rows = {'Train': [], 'Test': []}
        self._times = {'Train': [], 'Test': []}  # each row's absolute time, or None
        self._dropped = {'Train': 0, 'Test': 0}  # rows counted but not kept (from_state)

    def _time(self, line):
        """The seconds (since the log's first day began) of a glog line, or None. glog prints
        no year: the log's is taken, and times run on across New Year. The day and minute of a
        line are worked out once per minute of log (the cache), its seconds read in place."""
        short = line[5:6] == ' '  # I1201 21:19:00.953812 (BVLC's form), else I20261201 ...
        minute = line[1:11] if short else line[1:15]
        base = self._minutes.get(minute)
        if base is None:
            base = self._minute_base(line)
            if base is None:
                return None
            self._minutes[minute] = base
        try:
            return base + float(line[12:21] if short else line[16:25])
        except ValueError:
            return None

    def _minute_base(self, line):
        """The seconds at the start of a glog line's minute, or None for other lines."""
        match = _GLOG_TIME.match(line)
        if not match:
            return None
        logged_year, month, day, hour, minute = match.groups()[:5]
        year = int(logged_year) if logged_year else self._year + self._year_offset
        try:
            ordinal = datetime.date(year, int(month), int(day)).toordinal()
        except ValueError:  # e.g. Feb 29 in the wrong year
            return None
        if self._first_day is None:
            self._first_day = ordinal
        base = (ordinal - self._first_day) * 86400.0 + int(hour) * 3600 + int(minute) * 60
        if not logged_year and self._last_base is not None and \
                base < self._last_base - 300 * 86400:
            self._year_offset += 1
            return self._minute_base(line)
        self._last_base = base
        return base

    def feed(self, line):
        """Takes one line of the log."""
        if self._first_time is None:
            self._first_time = self._time(line)
        if 'Iteration ' in line:
            found = _ITERATION.search(line)
            if found:
                self._iteration = int(found.group(1))
                if ', lr = ' in line:
                    _note_learning_rate(line, self.learning_rates)
                    self._rate_iterations = None  # sorted again when rows are asked for
            return
        if ' net output #' in line:
            output = _output(line)
            if output and self._iteration is not None:
                self._add_output(line, *output)
            return
        if self._start_time is None and _START.search(line):
            self._start_time = self._time(line)

    def _add_output(self, line, phase, index, name, value):
        table = self._rows[phase]
        # Output #0 starts a new row (each display / test pass lists its outputs in order).
        if int(index) == 0 or not table or table[-1]['NumIters'] != self._iteration or \
                name in table[-1]:
            table.append({'NumIters': self._iteration, 'Seconds': None, 'LearningRate': None})
            self._times[phase].append(self._time(line))
        table[-1][name] = float(value)

    _STATE = ('_year', '_year_offset', '_last_base', '_first_time', '_start_time', '_minutes',
              '_first_day', '_iteration')

    def to_state(self, keep_rows=None):
        """What the parser has read, as JSON-able values (the web server keeps it beside a
        long log, so that a restarted server goes on from where it stopped). With keep_rows,
        only the last that many rows of each table are kept: a parser restored from it counts
        the others (row_count) but returns only rows from there on."""
        state = {name: getattr(self, name) for name in self._STATE}
        state['learning_rates'] = sorted(self.learning_rates.items())
        state['tables'] = {}
        for phase, rows in self._rows.items():
            kept = len(rows) if keep_rows is None else min(len(rows), keep_rows)
            state['tables'][phase] = {
                'dropped': self._dropped[phase] + len(rows) - kept,
                'rows': rows[len(rows) - kept:],
                'times': self._times[phase][len(rows) - kept:]}
        return state

    @classmethod
    def from_state(cls, state):
        parser = cls()
        for name in cls._STATE:
            setattr(parser, name, state[name])
        parser.learning_rates = {int(i): rate for i, rate in state['learning_rates']}
        for phase, table in state['tables'].items():
            parser._dropped[phase] = table['dropped']
            parser._rows[phase] = table['rows']
            parser._times[phase] = table['times']
        return parser

    def row_count(self, phase):
        """How many rows of 'Train' or 'Test' have been read so far."""
        return self._dropped[phase] + len(self._rows[phase])

    def rows(self, phase, begin=0):
        """The rows of 'Train' or 'Test' from index `begin` on (of those kept), with Seconds
        (since the solver started: its first "Solving ..." line, else the first dated line)
        and LearningRate (the one logged for the row's iteration, else the last before, else
        the first after)."""
        origin = self._start_time if self._start_time is not None else self._first_time
        begin = max(0, begin - self._dropped[phase])
        if self._rate_iterations is None:
            self._rate_iterations = sorted(self.learning_rates)
        rate_iterations = self._rate_iterations
        result = []
        for row, time in zip(self._rows[phase][begin:], self._times[phase][begin:]):
            row['Seconds'] = float('nan') if time is None or origin is None else time - origin
            row['LearningRate'] = _learning_rate_at(self.learning_rates, rate_iterations,
                                                    row['NumIters'])
            result.append(row)
        return result


def parse_log(path_to_log):
    """Returns (train_rows, test_rows): lists of dicts (in column order) with NumIters, Seconds,
    LearningRate and the net outputs, one per display interval / test pass."""
    parser = LogParser(datetime.datetime.fromtimestamp(os.path.getmtime(path_to_log)).year)
    with open(path_to_log, errors='replace') as log:
        for line in log:
            parser.feed(line)
    return parser.rows('Train'), parser.rows('Test')


def bvlc_tables(path_to_log):
    """BVLC's parse_log.sh tables: (train, test), lists of rows. Train: iteration, seconds, the
    display line's loss, the learning rate; test: iteration, seconds, test net outputs #0 and #1
    (accuracy and loss in BVLC's examples; nan where a pass has fewer)."""
    train, rates = [], {}
    for seconds, line in timed_lines(path_to_log):
        _note_learning_rate(line, rates)
        display = _DISPLAY_LOSS.search(line)
        if display:
            train.append([int(display.group(1)), float('nan') if seconds is None else seconds,
                          float(display.group(2))])
    rate_iterations = sorted(rates)
    for row in train:
        row.append(_learning_rate_at(rates, rate_iterations, row[0]))
    test = []
    for row in parse_log(path_to_log)[1]:
        outputs = list(row.values())[3:] + [float('nan')] * 2
        test.append([row['NumIters'], row['Seconds'], outputs[0], outputs[1]])
    return train, test


def write_table(output_path, header, rows):
    """Writes `header`, then the rows in columns aligned with spaces (as `column -t` aligns
    them)."""
    cells = [[_format(value) for value in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))] if cells else []
    with open(output_path, 'w') as output:
        output.write(header + '\n')
        for row in cells:
            output.write('  '.join(cell.ljust(width) for cell, width in zip(row, widths))
                         .rstrip() + '\n')


def _learning_rate_at(learning_rates, iterations, iteration):
    """The rate logged for `iteration`, else the last one before it, else the first after
    (`iterations`: the keys of learning_rates, sorted)."""
    if iteration in learning_rates:
        return learning_rates[iteration]
    place = bisect.bisect_right(iterations, iteration)
    if place > 0:
        return learning_rates[iterations[place - 1]]
    return learning_rates[iterations[0]] if iterations else float('nan')


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
    parser.add_argument('--tables', action='store_true',
                        help="write BVLC parse_log.sh's space-aligned tables instead of CSV")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.logfile_path):
        parser.error('no such log file: ' + args.logfile_path)
    if not os.path.isdir(args.output_dir):
        parser.error('no such output folder: ' + args.output_dir)
    if args.tables:
        train, test = bvlc_tables(args.logfile_path)
        name = os.path.join(args.output_dir, os.path.basename(args.logfile_path))
        write_table(name + '.train', '# Iters Seconds TrainingLoss LearningRate', train)
        write_table(name + '.test', '# Iters Seconds TestAccuracy TestLoss', test)
        return 0
    train_rows, test_rows = parse_log(args.logfile_path)
    if not train_rows and not test_rows:
        print('parse_log: warning: no "Train/Test net output" lines in ' + args.logfile_path,
              file=sys.stderr)
    save_csv_files(args.logfile_path, args.output_dir, train_rows, test_rows, args.delimiter,
                   args.verbose)
    return 0


if __name__ == '__main__':
    sys.exit(main())
