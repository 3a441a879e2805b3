#!/usr/bin/env python3
"""Plots where a net's time goes, from the output of `caffe time` (ours or BVLC's):

    caffe time -model net.prototxt -iterations 20 2>&1 | tee time.log
    plot_caffe_time.py time.log [more.log ...] -o time.png [--top N] [--title TEXT]

draws one horizontal bar per layer, forward and backward stacked, in net order, each labelled
with its milliseconds per iteration; nets of more than 60 layers show their 40 slowest (--top N
chooses, --top 0 shows all). Several logs (a CPU run and a GPU run, layers fused and apart, two
builds) are drawn side by side for each layer, and the title gives each one's Average
Forward-Backward. From Python: parse_time_log(path) returns the layers and the averages.
"""
import argparse
import os
import re
import sys
from collections import OrderedDict

_NUMBER = r'([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|nan|inf))'
# "I1121 10:00:00.000 123 caffe.cpp:559]      conv1	forward: 1.234 ms."
_LAYER = re.compile(r'\]\s+(\S+)\s+(forward|backward): ' + _NUMBER + r' ms\.')
_AVERAGE = re.compile(r'Average (Forward pass|Backward pass|Forward-Backward): ' + _NUMBER +
                      r' ms\.')
DEFAULT_TOP, ALL_UP_TO = 40, 60


def parse_time_log(path):
    """(layers, averages): layers maps each layer's name, in net order, to
    {'forward': ms, 'backward': ms}; averages maps 'Forward pass', 'Backward pass' and
    'Forward-Backward' to their ms. Raises ValueError for a file without per-layer lines."""
    layers, averages = OrderedDict(), {}
    with open(path, errors='replace') as log:
        for line in log:
            found = _LAYER.search(line)
            if found:
                name, direction, value = found.groups()
                layers.setdefault(name, {'forward': 0.0, 'backward': 0.0})[direction] = \
                    float(value)
                continue
            found = _AVERAGE.search(line)
            if found:
                averages[found.group(1)] = float(found.group(2))
    if not layers:
        raise ValueError('{}: no "<layer> forward: ... ms." lines: not the output of '
                         '`caffe time`?'.format(path))
    return layers, averages


def _chosen_layers(runs, top):
    """The layer names to draw: all in net order (the first log's, then any others'), or the
    `top` slowest by the largest forward + backward over the logs, still in net order."""
    names = []
    for layers, _ in runs:
        names.extend(name for name in layers if name not in names)
    if top is None:
        top = 0 if len(names) <= ALL_UP_TO else DEFAULT_TOP
    if top <= 0 or top >= len(names):
        return names, len(names)

    def cost(name):
        return max(sum(layers.get(name, {}).values()) for layers, _ in runs)
    slowest = set(sorted(names, key=cost, reverse=True)[:top])
    return [name for name in names if name in slowest], len(names)


def plot_time_logs(log_paths, output_path, top=None, title=None):
    """The bar chart of one or more `caffe time` logs (see the module doc)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    runs = [parse_time_log(path) for path in log_paths]
    names, total = _chosen_layers(runs, top)
    count = len(log_paths)
    bar = 0.8 / count
    figure, axis = plt.subplots(figsize=(10, max(3.0, 0.3 * len(names) * count + 1.5)))
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    widest = max(sum(layers.get(name, {}).values()) for layers, _ in runs for name in names)
    for index, (path, (layers, _)) in enumerate(zip(log_paths, runs)):
        rows = [row + index * bar - 0.4 + bar / 2 for row in range(len(names))]
        forward = [layers.get(name, {}).get('forward', 0.0) for name in names]
        backward = [layers.get(name, {}).get('backward', 0.0) for name in names]
        label = os.path.basename(path) + ': ' if count > 1 else ''
        colour = colours[(2 * index) % len(colours)]
        axis.barh(rows, forward, height=bar, color=colour, label=label + 'forward')
        axis.barh(rows, backward, height=bar, left=forward, color=colour, alpha=0.45,
                  label=label + 'backward')
        for row, ahead, behind in zip(rows, forward, backward):
            axis.text(ahead + behind + widest * 0.01, row, '{:.3g}'.format(ahead + behind),
                      va='center', fontsize=8)
    axis.set_yticks(range(len(names)))
    axis.set_yticklabels(names, fontsize=9)
    axis.invert_yaxis()  # net order from the top
    axis.set_xlim(0, widest * 1.12 if widest > 0 else 1)
    axis.set_xlabel('ms per iteration (forward + backward)')
    summary = '; '.join('{}{:.4g} ms forward-backward'.format(
        os.path.basename(path) + ': ' if count > 1 else '',
        averages.get('Forward-Backward', float('nan'))) for path, (_, averages) in
        zip(log_paths, runs))
    shown = '' if len(names) == total else ' ({} slowest of {} layers)'.format(len(names), total)
    axis.set_title((title or 'caffe time') + shown + '\n' + summary, fontsize=10)
    axis.grid(True, axis='x', alpha=0.3)
    axis.legend(loc='lower right', fontsize=9)
    figure.tight_layout()
    figure.savefig(output_path, dpi=100)
    plt.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot each layer's forward and backward time from `caffe time` output.")
    parser.add_argument('logs', nargs='+', help='outputs of `caffe time`')
    parser.add_argument('-o', '--output', required=True, help='the PNG to write')
    parser.add_argument('--top', type=int, default=None,
                        help='show the N slowest layers (0: all; default: all up to {}, else '
                             'the {} slowest)'.format(ALL_UP_TO, DEFAULT_TOP))
    parser.add_argument('--title', help='figure title')
    args = parser.parse_args(argv)
    for path in args.logs:
        if not os.path.isfile(path):
            parser.error('no such log file: ' + path)
    try:
        plot_time_logs(args.logs, args.output, args.top, args.title)
    except ValueError as error:
        print('plot_caffe_time.py: error: {}'.format(error), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
