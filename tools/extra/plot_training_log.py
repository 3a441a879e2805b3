#!/usr/bin/env python3
"""Plots caffe training logs (the glog output of `caffe train`) as a PNG with matplotlib.

    plot_training_log.py LOG [LOG ...] -o training.png [--x iters|seconds] [--title TEXT]

draws three panels against iterations (or seconds since the solver started): loss (train and
test), accuracy (test, and train when the train net reports it) and the learning rate. Several
logs are overlaid, labelled by file name.

BVLC's form is accepted too: plot_training_log.py CHART_TYPE OUT.png LOG [LOG ...], with
CHART_TYPE 0 test accuracy vs. iters, 1 test accuracy vs. seconds, 2 test loss vs. iters,
3 test loss vs. seconds, 4 train learning rate vs. iters, 5 train learning rate vs. seconds,
6 train loss vs. iters, 7 train loss vs. seconds.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_log import parse_log  # noqa: E402

# BVLC's chart types: (table, what, x axis).
BVLC_CHARTS = {
    0: ('test', 'accuracy', 'iters'), 1: ('test', 'accuracy', 'seconds'),
    2: ('test', 'loss', 'iters'), 3: ('test', 'loss', 'seconds'),
    4: ('train', 'lr', 'iters'), 5: ('train', 'lr', 'seconds'),
    6: ('train', 'loss', 'iters'), 7: ('train', 'loss', 'seconds'),
}
X_COLUMNS = {'iters': ('NumIters', 'Iterations'), 'seconds': ('Seconds', 'Seconds')}


def _pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _columns(rows, what):
    """The columns of `rows` that hold `what`: 'loss', 'accuracy' or 'lr'."""
    if what == 'lr':
        return ['LearningRate']
    keys = []
    for row in rows:
        keys.extend(k for k in row if k not in keys and k not in ('NumIters', 'Seconds',
                                                                   'LearningRate'))
    if what == 'accuracy':
        return [k for k in keys if 'acc' in k.lower()]
    return [k for k in keys if 'loss' in k.lower()]


def _series(rows, x, column):
    points = [(row[X_COLUMNS[x][0]], row[column]) for row in rows if column in row]
    return [p[0] for p in points], [p[1] for p in points]


def plot_logs(log_paths, output_path, x='iters', title=None):
    """The three-panel figure (loss, accuracy, learning rate) of one or more logs."""
    plt = _pyplot()
    figure, axes = plt.subplots(3, 1, figsize=(9, 10), sharex=True,
                                gridspec_kw={'height_ratios': [3, 3, 1.6]})
    loss_axis, accuracy_axis, rate_axis = axes
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    any_accuracy = False
    for index, path in enumerate(log_paths):
        train, test = parse_log(path)
        if not train and not test:
            raise ValueError('{}: no "Train/Test net output" lines: not a caffe training '
                             'log?'.format(path))
        colour = colours[index % len(colours)]
        name = os.path.basename(path) + ': ' if len(log_paths) > 1 else ''
        for column in _columns(train, 'loss'):
            xs, ys = _series(train, x, column)
            loss_axis.plot(xs, ys, '-', color=colour, alpha=0.75, linewidth=1.5,
                           label='{}train {}'.format(name, column))
        for column in _columns(test, 'loss'):
            xs, ys = _series(test, x, column)
            loss_axis.plot(xs, ys, 'o--', color=colour, markersize=6, linewidth=1.5,
                           label='{}test {}'.format(name, column))
        for rows, phase, style in ((test, 'test', 'o-'), (train, 'train', '-')):
            for column in _columns(rows, 'accuracy'):
                xs, ys = _series(rows, x, column)
                accuracy_axis.plot(xs, ys, style, color=colour, markersize=6, linewidth=1.5,
                                   label='{}{} {}'.format(name, phase, column))
                any_accuracy = True
                if phase == 'test' and ys:
                    accuracy_axis.annotate('{:.4f}'.format(ys[-1]), (xs[-1], ys[-1]),
                                           textcoords='offset points', xytext=(-10, -16),
                                           ha='right', fontsize=10, color=colour)
        xs, ys = _series(train or test, x, 'LearningRate')
        rate_axis.plot(xs, ys, '-', color=colour, linewidth=1.5, label=name.rstrip(': ') or None)
    loss_axis.set_ylabel('loss')
    loss_axis.set_yscale('log')
    loss_axis.set_title(title or 'Training: ' + ', '.join(os.path.basename(p)
                                                          for p in log_paths))
    accuracy_axis.set_ylabel('accuracy')
    if any_accuracy:
        accuracy_axis.set_ylim(top=1.0)
    else:
        accuracy_axis.text(0.5, 0.5, 'no accuracy output in the log', ha='center',
                           transform=accuracy_axis.transAxes)
    rate_axis.set_ylabel('learning rate')
    rate_axis.set_xlabel(X_COLUMNS[x][1])
    for axis in axes:
        axis.grid(True, alpha=0.3)
        if axis.get_legend_handles_labels()[0] and axis is not rate_axis:
            axis.legend(loc='best', fontsize=10)
    figure.tight_layout()
    figure.savefig(output_path, dpi=100)
    plt.close(figure)


def plot_bvlc_chart(chart_type, output_path, log_paths):
    """One of BVLC's eight charts (see the module doc) for one or more logs."""
    table, what, x = BVLC_CHARTS[chart_type]
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(8, 5))
    labels = {'accuracy': 'Test accuracy', 'loss': table.capitalize() + ' loss',
              'lr': 'Train learning rate'}
    for path in log_paths:
        train, test = parse_log(path)
        rows = test if table == 'test' else train
        columns = _columns(rows, what)
        if not columns:
            raise ValueError('{}: no {} {} in the log'.format(path, table, what))
        xs, ys = _series(rows, x, columns[0])
        axis.plot(xs, ys, 'o-' if table == 'test' else '-',
                  label=os.path.splitext(os.path.basename(path))[0])
    axis.set_title('{} vs. {}'.format(labels[what], X_COLUMNS[x][1]))
    axis.set_xlabel(X_COLUMNS[x][1])
    axis.set_ylabel(labels[what])
    axis.grid(True, alpha=0.3)
    axis.legend(loc='best')
    figure.tight_layout()
    figure.savefig(output_path, dpi=100)
    plt.close(figure)


def _fail(message):
    """A user's mistake (a missing log, a log without the chart's data): one line, exit 1."""
    print('plot_training_log.py: error: ' + message, file=sys.stderr)
    return 1


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].isdigit():
        if len(argv) < 3 or int(argv[0]) not in BVLC_CHARTS:
            print(__doc__, file=sys.stderr)
            return 2
        missing = [path for path in argv[2:] if not os.path.isfile(path)]
        if missing:
            return _fail('no such log file: ' + missing[0])
        try:
            plot_bvlc_chart(int(argv[0]), argv[1], argv[2:])
        except ValueError as error:
            return _fail(str(error))
        return 0
    parser = argparse.ArgumentParser(
        description='Plot loss, accuracy and learning rate of caffe training logs.')
    parser.add_argument('logs', nargs='+', help='logs of `caffe train`')
    parser.add_argument('-o', '--output', required=True, help='the PNG to write')
    parser.add_argument('--x', choices=sorted(X_COLUMNS), default='iters',
                        help='x axis: iterations (default) or seconds')
    parser.add_argument('--title', help='figure title')
    args = parser.parse_args(argv)
    for path in args.logs:
        if not os.path.isfile(path):
            parser.error('no such log file: ' + path)
    try:
        plot_logs(args.logs, args.output, args.x, args.title)
    except ValueError as error:
        return _fail(str(error))
    return 0


if __name__ == '__main__':
    sys.exit(main())
