#!/usr/bin/env python3
"""Summarizes a timeline written by `caffe train -timeline` or `caffe time -timeline`
(docs/TIMELINE.md): per recorded iteration and on average, the step time; how much of it the
layers computed (and, in GPU mode, how much the GPU was busy with them); how long the step waited for data, for the gradients' exchange with the other
learners, and for LMS copies; the bytes copied to and from the device and at what rate; the ten
most expensive layers; and with several ranks (trace.rank0.json, ...) each rank's figures, the
slowest named.

    python tools/extra/summarize_timeline.py trace.json              # or trace.rank0.json ...
    python tools/extra/summarize_timeline.py trace.json --plot steps.png
"""
import argparse
import glob
import json
import os
import re
import sys
from collections import defaultdict

TOP_LAYERS = 10


class TimelineError(Exception):
    """A file that is not a timeline: the message names it and what was wrong."""


def trace_files(path):
    """The files of a timeline: `path` itself, or its ranks' files (path with .rankN)."""
    if os.path.exists(path):
        return [path]
    stem, extension = os.path.splitext(path)
    ranks = glob.glob(glob.escape(stem) + '.rank*' + extension)
    ranks.sort(key=lambda name: int(re.search(r'\.rank(\d+)', name).group(1)))
    if not ranks:
        raise TimelineError('{}: no such file (nor {}.rankN{})'.format(path, stem, extension))
    return ranks


def load(path):
    """(rank, events, start) of one trace file; start: when its recording began, in microseconds
    on the system clock (0: unknown)."""
    try:
        with open(path) as stream:
            trace = json.load(stream)
    except (OSError, ValueError) as error:
        raise TimelineError('{}: not a timeline ({})'.format(path, error))
    if not isinstance(trace, dict) or 'traceEvents' not in trace:
        raise TimelineError('{}: not a timeline (no traceEvents)'.format(path))
    other = trace.get('otherData', {})
    return other.get('rank', 0), trace['traceEvents'], other.get('epoch_unix_us', 0)


def on_one_clock(path):
    """[(file, rank, events)] of the timeline's files, their times on the first file's clock: the
    recorders' starts on the system clock line them up."""
    loaded = [(file,) + load(file) for file in trace_files(path)]
    first = loaded[0][3]
    # The shift first: microseconds since 1970 added to a trace time would lose its fraction.
    return [(file, rank, [dict(e, ts=e['ts'] + (start - first)) if 'ts' in e else e
                          for e in events])
            for file, rank, events, start in loaded]


def inside(event, outer):
    return (event['ts'] >= outer['ts'] and
            event['ts'] + event['dur'] <= outer['ts'] + outer['dur'] + 1e-3)


def overlap(a, b):
    """Microseconds slices a and b share."""
    return max(0.0, min(a['ts'] + a['dur'], b['ts'] + b['dur']) - max(a['ts'], b['ts']))


def outermost(slices):
    """The slices not inside another of their track (a stage inside its allreduce counts once)."""
    kept, open_ends = [], {}
    for e in sorted(slices, key=lambda e: (e['ts'], -e['dur'])):
        end = open_ends.get(e['tid'], -1.0)
        if e['ts'] + e['dur'] <= end + 1e-3:
            continue
        kept.append(e)
        open_ends[e['tid']] = e['ts'] + e['dur']
    return kept


def gpu_tracks(events):
    """The ids of the tracks where the GPU's own layer times are ("GPU N compute")."""
    return {e['tid'] for e in events
            if e.get('ph') == 'M' and e.get('name') == 'thread_name' and
            str(e.get('args', {}).get('name', '')).startswith('GPU ')}


def iterations(events):
    """One dict per recorded step: its figures in milliseconds, bytes and per-layer times (the
    GPU's where it recorded them: the host's slices there are only the launches)."""
    slices = [e for e in events if e.get('ph') == 'X']
    on_gpu = gpu_tracks(events)
    gpu_slices = [e for e in slices if e['tid'] in on_gpu and e['cat'] in ('forward', 'backward')]
    slices = [e for e in slices if e['tid'] not in on_gpu]
    top = outermost(slices)
    steps = sorted((e for e in slices if e.get('cat') == 'step'), key=lambda e: e['ts'])
    rows = []
    for step in steps:
        track = [e for e in slices if e['tid'] == step['tid'] and e is not step and inside(e, step)]
        others = [e for e in top if e['tid'] != step['tid'] and overlap(e, step) > 0]
        layers = defaultdict(float)
        compute = 0.0
        for e in track:
            if e['cat'] in ('forward', 'backward'):
                compute += e['dur']
                layers[e['name']] += e['dur'] / 1000
        sync = sum(e['dur'] for e in track if e['cat'] == 'communication')
        exchanges = [e for e in others if e['cat'] == 'communication']
        communication = sum(overlap(e, step) for e in exchanges)
        # The exchange's time while this track computed layers: hidden behind compute.
        computing = [e for e in track if e['cat'] in ('forward', 'backward')]
        hidden = sum(overlap(e, c) for e in exchanges for c in computing)
        copies = [e for e in others + track if e['cat'] == 'copy']
        gpu = [e for e in gpu_slices if overlap(e, step) > 0]
        if gpu:
            layers = defaultdict(float)
            for e in gpu:
                layers[e['name']] += e['dur'] / 1000
        rows.append({
            'iteration': int(step.get('args', {}).get('iteration', len(rows))),
            'step': step['dur'] / 1000,
            'compute': compute / 1000,
            'data_wait': sum(e['dur'] for e in track if e['name'] == 'wait for data') / 1000,
            'sync_wait': sync / 1000,
            'communication': communication / 1000,
            'hidden': hidden / 1000,
            'stall': sum(e['dur'] for e in track if e['cat'] == 'lms') / 1000,
            'h2d_bytes': sum(e['args'].get('bytes', 0) for e in copies
                             if e['name'].startswith('swap in')),
            'd2h_bytes': sum(e['args'].get('bytes', 0) for e in copies
                             if e['name'].startswith('swap out')),
            'h2d_time': sum(e['dur'] for e in copies if e['name'].startswith('swap in')) / 1000,
            'd2h_time': sum(e['dur'] for e in copies if e['name'].startswith('swap out')) / 1000,
            'gpu_busy': sum(overlap(e, step) for e in gpu) / 1000 if gpu else None,
            'layers': layers,
        })
    return rows


def rate(bytes_, ms):
    return bytes_ / ms / 1e6 if ms > 0 else 0.0


def average(rows):
    keys = ('step', 'compute', 'data_wait', 'sync_wait', 'communication', 'hidden', 'stall',
            'h2d_bytes', 'd2h_bytes', 'h2d_time', 'd2h_time')
    mean = {key: sum(row[key] for row in rows) / len(rows) for key in keys}
    busy = [row['gpu_busy'] for row in rows if row['gpu_busy'] is not None]
    mean['gpu_busy'] = sum(busy) / len(busy) if busy else None
    layers = defaultdict(float)
    for row in rows:
        for name, ms in row['layers'].items():
            layers[name] += ms / len(rows)
    mean['layers'] = layers
    return mean


def percent(part, whole):
    return 100.0 * part / whole if whole > 0 else 0.0


HEADER = ('{:>9} {:>10} {:>9} {:>9} {:>10} {:>10} {:>10} {:>8} {:>9} {:>11} {:>11}'.format(
    'iteration', 'step (ms)', 'compute', 'GPU busy', 'data wait', 'comm (ms)', 'hidden',
    'LMS stall', 'sync wait', 'H2D GB/s', 'D2H GB/s'))


ROW = ('{:>9} {:>10.2f} {:>8.1f}% {:>9} {:>9.1f}% {:>10.2f} {:>9.1f}% {:>8.2f} {:>9.2f} {:>11} '
       '{:>11}')


def format_row(label, row):
    step = row['step']
    busy = row.get('gpu_busy')
    return ROW.format(
        label, step, percent(row['compute'], step),
        '-' if busy is None else '{:.1f}%'.format(percent(busy, step)),
        percent(row['data_wait'], step),
        row['communication'], percent(row['hidden'], row['communication']), row['stall'],
        row['sync_wait'],
        '{:.1f} ({:.0f} MB)'.format(rate(row['h2d_bytes'], row['h2d_time']),
                                    row['h2d_bytes'] / 1e6) if row['h2d_bytes'] else '-',
        '{:.1f} ({:.0f} MB)'.format(rate(row['d2h_bytes'], row['d2h_time']),
                                    row['d2h_bytes'] / 1e6) if row['d2h_bytes'] else '-')


def summarize(path, out=None):
    """Prints the table of the timeline at `path` (to `out`, default stdout); returns
    {rank: (rows, mean)}."""
    out = out or sys.stdout
    ranks = {}
    for file in trace_files(path):
        rank, events, _ = load(file)
        rows = iterations(events)
        if not rows:
            raise TimelineError('{}: no iteration recorded (was -timeline_iters inside the run?)'
                                .format(file))
        ranks[rank] = (rows, average(rows))
    for rank in sorted(ranks):
        rows, mean = ranks[rank]
        if len(ranks) > 1:
            out.write('rank {}\n'.format(rank))
        out.write(HEADER + '\n')
        for row in rows:
            out.write(format_row(str(row['iteration']), row) + '\n')
        out.write(format_row('average', mean) + '\n')
        top = sorted(mean['layers'].items(), key=lambda item: -item[1])[:TOP_LAYERS]
        out.write('most expensive layers (forward + backward, ms per iteration):\n')
        for name, ms in top:
            out.write('  {:<32} {:>9.2f} {:>6.1f}%\n'.format(name, ms, percent(ms, mean['step'])))
        out.write('\n')
    if len(ranks) > 1:
        slowest = max(ranks, key=lambda rank: ranks[rank][1]['step'])
        fastest = min(ranks, key=lambda rank: ranks[rank][1]['step'])
        out.write('slowest rank: {} ({:.2f} ms per step; fastest: rank {}, {:.2f} ms)\n'.format(
            slowest, ranks[slowest][1]['step'], fastest, ranks[fastest][1]['step']))
    return ranks


def plot(ranks, png):
    """A stacked bar per iteration (per rank): compute, data wait, gradient sync wait, LMS
    stalls and the rest of the step."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(len(ranks), 1, figsize=(10, 3 * len(ranks)), squeeze=False)
    parts = (('compute', 'compute', '#4c72b0'), ('data_wait', 'data wait', '#dd8452'),
             ('sync_wait', 'gradient sync wait', '#55a868'), ('stall', 'LMS stall', '#c44e52'))
    for axis, rank in zip(axes[:, 0], sorted(ranks)):
        rows = ranks[rank][0]
        x = [row['iteration'] for row in rows]
        bottom = [0.0] * len(rows)
        for key, label, color in parts:
            values = [row[key] for row in rows]
            axis.bar(x, values, bottom=bottom, label=label, color=color)
            bottom = [b + v for b, v in zip(bottom, values)]
        rest = [max(0.0, row['step'] - b) for row, b in zip(rows, bottom)]
        axis.bar(x, rest, bottom=bottom, label='other', color='#bbbbbb')
        axis.set_ylabel('ms')
        axis.set_title('rank {}: where each step\'s time went'.format(rank))
        axis.legend(loc='upper right', fontsize='small')
    axes[-1, 0].set_xlabel('iteration')
    figure.tight_layout()
    figure.savefig(png)


def merge(path, out):
    """Writes the ranks' files as one trace, a process row per rank, on rank 0's clock."""
    events = [e for _, _, file_events in on_one_clock(path) for e in file_events]
    with open(out, 'w') as stream:
        json.dump({'displayTimeUnit': 'ms', 'traceEvents': events}, stream)


COLORS = {'forward': '#4c72b0', 'backward': '#8172b3', 'data': '#dd8452', 'update': '#55a868',
          'communication': '#64b5cd', 'lms': '#c44e52', 'copy': '#da8bc3', 'test': '#937860',
          'snapshot': '#8c8c8c', 'step': '#dddddd'}


def draw(path, png, first=None, count=2):
    """Draws `count` recorded iterations (from `first`, default the second recorded) as a
    viewer shows them: a row per track of every rank, slices as bars stacked by their nesting,
    coloured by category."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    rows = []  # (label, [(start, duration, depth, category)])
    window = None
    for file, rank, events in on_one_clock(path):
        names = {e['tid']: e['args']['name'] for e in events
                 if e.get('ph') == 'M' and e['name'] == 'thread_name'}
        slices = [e for e in events if e.get('ph') == 'X']
        steps = sorted((e for e in slices if e['cat'] == 'step'), key=lambda e: e['ts'])
        if not steps:
            raise TimelineError('{}: no iteration recorded'.format(file))
        if window is None:
            at = 1 if first is None and len(steps) > 1 else 0
            if first is not None:
                at = next((i for i, e in enumerate(steps) if e['args']['iteration'] == first), 0)
            chosen = steps[at:at + count]
            window = (chosen[0]['ts'], chosen[-1]['ts'] + chosen[-1]['dur'])
        for tid in sorted({e['tid'] for e in slices}):
            track = sorted((e for e in slices if e['tid'] == tid and
                            e['ts'] < window[1] and e['ts'] + e['dur'] > window[0]),
                           key=lambda e: (e['ts'], -e['dur']))
            bars, open_ends = [], []
            for e in track:
                while open_ends and open_ends[-1] <= e['ts']:
                    open_ends.pop()
                bars.append((e['ts'], e['dur'], len(open_ends), e['cat']))
                open_ends.append(e['ts'] + e['dur'])
            if bars:
                rows.append(('rank {} {}'.format(rank, names.get(tid, tid)), bars))
    depth = max(1, max(b[2] for _, bars in rows for b in bars) + 1)
    figure, axis = plt.subplots(figsize=(12, 0.5 + 0.35 * depth * len(rows)))
    for index, (label, bars) in enumerate(rows):
        base = (len(rows) - 1 - index) * depth
        for start, duration, level, category in bars:
            axis.broken_barh([((start - window[0]) / 1000, duration / 1000)],
                             (base + depth - 1 - level, 0.9), color=COLORS.get(category, '#999999'),
                             edgecolor='white',
                             linewidth=0.4 if duration > 0.005 * (window[1] - window[0]) else 0)
    axis.set_yticks([(len(rows) - 1 - i) * depth + depth / 2 for i in range(len(rows))])
    axis.set_yticklabels([label for label, _ in rows])
    axis.set_xlim(0, (window[1] - window[0]) / 1000)
    axis.set_xlabel('ms')
    used = sorted({b[3] for _, bars in rows for b in bars})
    axis.legend(handles=[Patch(color=COLORS.get(c, '#999999'), label=c) for c in used],
                loc='lower center', bbox_to_anchor=(0.5, 1.0), ncol=len(used), fontsize='small',
                frameon=False)
    figure.tight_layout()
    figure.savefig(png)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('timeline', help='the file of -timeline (with several ranks, the name '
                        'given to -timeline or one rank\'s file)')
    parser.add_argument('--plot', metavar='PNG', help='also draw the breakdown per iteration')
    parser.add_argument('--merge', metavar='JSON', help='also write the ranks\' files as one '
                        'trace, a row per rank, for a viewer')
    parser.add_argument('--draw', metavar='PNG', help='also draw two iterations as a viewer '
                        'shows them, a row per thread (of every rank)')
    args = parser.parse_args(argv)
    path = args.timeline
    if re.search(r'\.rank\d+\.', os.path.basename(path)):
        path = re.sub(r'\.rank\d+(\.[^.]*)$', r'\1', path)
    try:
        ranks = summarize(path)
    except TimelineError as error:
        sys.stderr.write('summarize_timeline.py: error: {}\n'.format(error))
        return 1
    if args.plot:
        plot(ranks, args.plot)
        print('plot written to {}'.format(args.plot))
    if args.merge:
        merge(path, args.merge)
        print('ranks merged into {}'.format(args.merge))
    if args.draw:
        draw(path, args.draw)
        print('timeline drawn in {}'.format(args.draw))
    return 0


if __name__ == '__main__':
    sys.exit(main())
