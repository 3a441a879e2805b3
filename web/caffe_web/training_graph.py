"""The model page's graphs, read from `caffe train`'s own log with tools/extra/parse_log.py's
LogParser (one parser for the command line and the page). Each job's parser is kept between
requests and fed only the bytes the log gained since, so the live graph costs the training
process nothing (the server only reads the file it writes anyway) and the server little.
Series are in epochs; a long history is thinned for the page to at most MAX_POINTS per series,
keeping each bucket's lowest and highest value so that spikes stay visible."""
import datetime
import os
import sys
import threading

from .config import SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, 'tools', 'extra'))
from parse_log import LogParser  # noqa: E402

MAX_POINTS = 1000


class LogFollower(object):
    """A LogParser fed from a growing file."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.pending = b''
        self.lock = threading.Lock()
        self.parser = None

    def update(self):
        with self.lock:
            try:
                size = os.path.getsize(self.path)
            except OSError:
                return self.parser
            if self.parser is None or size < self.offset:  # new, or the log was replaced
                year = datetime.datetime.fromtimestamp(os.path.getmtime(self.path)).year
                self.parser, self.offset, self.pending = LogParser(year), 0, b''
            if size > self.offset:
                with open(self.path, 'rb') as log:
                    log.seek(self.offset)
                    data = self.pending + log.read(size - self.offset)
                self.offset = size
                complete, _, self.pending = data.rpartition(b'\n')
                if complete:
                    for line in complete.decode('utf-8', 'replace').split('\n'):
                        self.parser.feed(line)
            return self.parser


_followers = {}
_followers_lock = threading.Lock()


def follower(path):
    with _followers_lock:
        found = _followers.get(path)
        if found is None:
            found = _followers[path] = LogFollower(path)
    return found


def thin(points):
    """At most MAX_POINTS of `points` ([x, y]): each bucket's first, lowest and highest."""
    if len(points) <= MAX_POINTS:
        return points
    size = int(len(points) / (MAX_POINTS / 3.0)) + 1
    kept = []
    for begin in range(0, len(points), size):
        bucket = points[begin:begin + size]
        chosen = {0, min(range(len(bucket)), key=lambda i: bucket[i][1]),
                  max(range(len(bucket)), key=lambda i: bucket[i][1])}
        kept.extend(bucket[i] for i in sorted(chosen))
    if kept[-1] is not points[-1]:
        kept.append(points[-1])
    return kept


def series(job, since_train=0, since_test=0):
    """{'train': {output: [[epoch, value]]}, 'val': {...}, 'lr': [[epoch, lr]], 'counts':
    {'train': rows read, 'test': rows read}, 'last': {...}} of the rows after the given
    counts (all of them, thinned, for a page that has none yet)."""
    per_epoch = float(job.params.get('iters_per_epoch') or 1)
    parser = follower(job.path('train.log')).update()
    result = {'train': {}, 'val': {}, 'lr': [], 'counts': {'train': 0, 'test': 0}, 'last': {}}
    if parser is None:
        return result
    train = parser.rows('Train', since_train)
    test = parser.rows('Test', since_test)
    for rows, key in ((train, 'train'), (test, 'val')):
        for row in rows:
            epoch = round(row['NumIters'] / per_epoch, 4)
            for name, value in list(row.items())[3:]:
                result[key].setdefault(name, []).append([epoch, value])
    result['lr'] = [[round(row['NumIters'] / per_epoch, 4), row['LearningRate']]
                    for row in train]
    for key in ('train', 'val'):
        result[key] = {name: thin(points) for name, points in result[key].items()}
    result['lr'] = thin(result['lr'])
    result['counts'] = {'train': parser.row_count('Train'), 'test': parser.row_count('Test')}
    if parser.row_count('Train'):
        last = parser.rows('Train', parser.row_count('Train') - 1)[0]
        result['last'] = {'iteration': last['NumIters'], 'seconds': last['Seconds'],
                          'epoch': round(last['NumIters'] / per_epoch, 2)}
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
    if len(rows) < 2 or seconds <= 0 or last['NumIters'] <= first['NumIters']:
        return None
    pace = (last['NumIters'] - first['NumIters']) / seconds
    return max(0.0, (max_iter - last['NumIters']) / pace)
