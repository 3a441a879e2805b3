"""The model page's graphs, read from `caffe train`'s own log with tools/extra/parse_log.py's
LogParser (one parser for the command line and the page). Each log has one LogFollower in the
server: it feeds the parser only the bytes the log gained since the last look, turns the new
rows into points against epochs once, and keeps what it parsed beside the log (graph_cache.json,
checked against the log's size and first bytes) so that a restarted server goes on from there.
The training process is never asked anything: the server reads the file it writes anyway.
A page gets every series thinned to at most MAX_POINTS (each bucket's first, lowest and highest
value, so that spikes stay), then the new points as they come."""
import datetime
import math
import os
import sys
import threading

import numpy as np

from .config import SOURCE_DIR
from .jobstore import read_json, write_json

sys.path.insert(0, os.path.join(SOURCE_DIR, 'tools', 'extra'))
from parse_log import LogParser  # noqa: E402

MAX_POINTS = 1000
CACHE_NAME = 'graph_cache.json'
CACHE_AFTER_BYTES = 4 << 20  # a parse of this much log is worth keeping
_ROW_COLUMNS = {'NumIters', 'Seconds', 'LearningRate'}  # the rest of a row: the net's outputs
KEEP_ROWS = 100              # rows the cache keeps of the parser's (the time left needs 20)
HEAD_BYTES = 512             # the log's first bytes, which tell a replaced log from a grown one


class LogFollower(object):
    """A LogParser fed from a growing log, and the points its rows make."""

    def __init__(self, path, per_epoch):
        self.path, self.per_epoch = path, float(per_epoch or 1)
        self.cache_path = os.path.join(os.path.dirname(path), CACHE_NAME)
        self.lock = threading.Lock()
        self._reset()

    def _reset(self):
        self.parser, self.offset, self.pending, self.saved_offset = None, 0, b'', 0
        self.resumed_from = 0  # the log offset graph_cache.json let the parse start at
        # Per phase: the epoch of each row taken, and each output's values (nan where a row
        # lacks it); the learning rate of each train row.
        self.epochs = {'Train': [], 'Test': []}
        self.values = {'Train': {}, 'Test': {}}
        self.rates = []

    def _head(self):
        with open(self.path, 'rb') as log:
            return log.read(HEAD_BYTES).decode('utf-8', 'replace')

    def _load_cache(self, size):
        cache = read_json(self.cache_path)
        try:
            if cache and cache['log_size'] <= size and cache['head'] == self._head():
                self.parser = LogParser.from_state(cache['parser'])
                self.epochs, self.values, self.rates = (cache['epochs'], cache['values'],
                                                        cache['rates'])
                self.offset = self.saved_offset = self.resumed_from = cache['log_size']
                self.pending = cache['pending'].encode('utf-8')
                return True
        except (KeyError, TypeError, ValueError):
            self._reset()
        return False

    def _save_cache(self):
        """The points, and the parser with its last rows (the points hold the rest)."""
        state = {'log_size': self.offset, 'head': self._head(),
                 'pending': self.pending.decode('utf-8', 'replace'),
                 'parser': self.parser.to_state(keep_rows=KEEP_ROWS), 'epochs': self.epochs,
                 'values': self.values, 'rates': self.rates}
        write_json(self.cache_path, state, compact=True)
        self.saved_offset = self.offset

    def update(self, finished=False):
        """Reads what the log gained; returns the parser (None before the log exists)."""
        with self.lock:
            try:
                size = os.path.getsize(self.path)
            except OSError:
                return self.parser
            if self.parser is None or size < self.offset:  # first look, or a replaced log
                self._reset()
                if not self._load_cache(size):
                    year = datetime.datetime.fromtimestamp(os.path.getmtime(self.path)).year
                    self.parser = LogParser(year)
            if size > self.offset:
                with open(self.path, 'rb') as log:
                    log.seek(self.offset)
                    data = self.pending + log.read(size - self.offset)
                self.offset = size
                complete, _, self.pending = data.rpartition(b'\n')
                if complete:
                    for line in complete.decode('utf-8', 'replace').split('\n'):
                        self.parser.feed(line)
            self._take_rows(finished)
            return self.parser

    def save_if_due(self, finished=False):
        """Keeps the parse beside the log after every CACHE_AFTER_BYTES of it, and at the end
        of a long one (the live updates call it after sending, so no page waits for it)."""
        with self.lock:
            if self.parser is not None and (
                    self.offset - self.saved_offset >= CACHE_AFTER_BYTES or
                    (finished and self.offset != self.saved_offset and
                     self.offset >= CACHE_AFTER_BYTES)):
                self._save_cache()

    def _take_rows(self, finished):
        """Turns the rows not yet taken into points. The last train row waits for its
        "Iteration N, lr = x" line (logged after it) while the job runs."""
        parser = self.parser
        for phase in ('Train', 'Test'):
            taken = len(self.epochs[phase])
            count = parser.row_count(phase)
            if phase == 'Train' and not finished and count > taken:
                last = parser.rows(phase, count - 1)[0]
                if last['NumIters'] not in parser.learning_rates:
                    count -= 1
            if count <= taken:
                continue
            rows = parser.rows(phase, taken)[:count - taken]
            index = len(self.epochs[phase])
            per_epoch = self.per_epoch
            self.epochs[phase].extend(row['NumIters'] / per_epoch for row in rows)
            names = set().union(*(row.keys() for row in rows)) - _ROW_COLUMNS
            for name in names:
                series = self.values[phase].setdefault(name, [])
                if len(series) < index:  # rows before these lacked the output
                    series.extend([math.nan] * (index - len(series)))
                series.extend(row.get(name, math.nan) for row in rows)
            if phase == 'Train':
                self.rates.extend(row['LearningRate'] for row in rows)

    def points(self, begin_train=0, begin_test=0):
        """{'train': {name: [[epoch, value]]}, 'val': {...}, 'lr': [[epoch, lr]]} of the rows
        from the given indices on; thinned when that is all of them."""
        result = {'train': {}, 'val': {}, 'lr': []}
        for phase, key, begin in (('Train', 'train', begin_train), ('Test', 'val', begin_test)):
            epochs = self.epochs[phase]
            for name, values in self.values[phase].items():
                result[key][name] = _pairs(epochs[begin:], values[begin:], thin=begin == 0)
        result['lr'] = _pairs(self.epochs['Train'][begin_train:], self.rates[begin_train:],
                              thin=begin_train == 0)
        return result


def _pairs(epochs, values, thin):
    """[[epoch, value]] where the value is finite; at most MAX_POINTS when `thin`."""
    x = np.asarray(epochs, dtype=np.float64)
    y = np.asarray(values + [math.nan] * (len(epochs) - len(values)), dtype=np.float64)
    keep = np.isfinite(y)  # a diverged loss (nan, inf) has no place on the graph (nor in JSON)
    x, y = x[keep], y[keep]
    if thin and len(x) > MAX_POINTS:
        size = int(math.ceil(len(x) / (MAX_POINTS / 3.0)))
        buckets = len(x) // size
        body = y[:buckets * size].reshape(buckets, size)
        starts = np.arange(buckets) * size
        chosen = np.concatenate([starts, starts + body.argmin(axis=1),
                                 starts + body.argmax(axis=1), np.arange(buckets * size,
                                                                         len(x))])
        chosen = np.unique(chosen)
        x, y = x[chosen], y[chosen]
    return np.column_stack([np.round(x, 4), y]).tolist()


_followers = {}
_followers_lock = threading.Lock()


def follower(job):
    path = job.path('train.log')
    with _followers_lock:
        found = _followers.get(path)
        if found is None:
            found = _followers[path] = LogFollower(path, job.params.get('iters_per_epoch'))
    return found


def keep_parse(job, finished=True):
    """Brings the job's parse up to its log and keeps it beside the log if that is due (the
    runner at a job's end; the scheduler now and then while it runs)."""
    followed = follower(job)
    followed.update(finished)
    followed.save_if_due(finished)


def series(job, since_train=0, since_test=0, finished=False):
    """The graph rows after the counts the page has (all of them, thinned, for a page that has
    none), the counts now, the last train row's iteration and epoch, and the time left."""
    followed = follower(job)
    parser = followed.update(finished)
    result = {'train': {}, 'val': {}, 'lr': [], 'counts': {'train': 0, 'test': 0}, 'last': {}}
    if parser is None:
        return result
    with followed.lock:
        result.update(followed.points(since_train, since_test))
        result['counts'] = {'train': len(followed.epochs['Train']),
                            'test': len(followed.epochs['Test'])}
    count = parser.row_count('Train')
    if count:
        last = parser.rows('Train', count - 1)[0]
        per_epoch = followed.per_epoch
        result['last'] = {'iteration': last['NumIters'], 'epoch': round(last['NumIters'] /
                                                                         per_epoch, 2)}
        result['eta_seconds'] = _seconds_left(parser, per_epoch * job.params.get('epochs', 0))
    return result


def _seconds_left(parser, max_iter):
    """From the pace of the last stretch of display lines (within one run: a resumed log starts
    a new stretch)."""
    count = parser.row_count('Train')
    rows = parser.rows('Train', max(0, count - 20))
    rows = [row for row in rows if row['NumIters'] >= rows[0]['NumIters']]
    first, last = rows[0], rows[-1]
    seconds = last['Seconds'] - first['Seconds']
    if len(rows) < 2 or not seconds > 0 or last['NumIters'] <= first['NumIters']:
        return None
    pace = (last['NumIters'] - first['NumIters']) / seconds
    return max(0.0, (max_iter - last['NumIters']) / pace)
