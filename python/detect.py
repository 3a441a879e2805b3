#!/usr/bin/env python3
"""Classifies windows of images (R-CNN style) with caffe.Detector and writes the scores as CSV:

    detect.py WINDOWS.csv OUTPUT.csv [--model_def deploy.prototxt] [--pretrained_model w.caffemodel]
              [--gpu] [--context_pad 16] [--mean_file mean.npy] [--mean_value 104,117,123]
              [--raw_scale 255] [--input_scale 1] [--channel_swap 2,1,0]

WINDOWS.csv has one window per row: filename,ymin,xmin,ymax,xmax (pixels; a first row naming
these columns is skipped). OUTPUT.csv has the same columns followed by the net's first output,
one column per class (class0, class1, ...). Each window, grown by --context_pad pixels of
context, is warped to the net's input size. Images and preprocessing are as in classify.py; the
default net is BVLC's R-CNN ILSVRC13 model from models/bvlc_reference_rcnn_ilsvrc13.
Proposing windows (selective search) is not part of this script: pass your own.
"""
import argparse
import csv
import sys
import time

import _build_tree  # this folder: the scripts' helper

_build_tree.prefer_built_caffe()
import numpy as np  # noqa: E402

import caffe  # noqa: E402
from classify import add_net_arguments, net_settings  # noqa: E402

COLUMNS = ['filename', 'ymin', 'xmin', 'ymax', 'xmax']


def read_windows(path):
    """[(filename, windows array (R x 4))] in the order the files first appear."""
    grouped = {}
    with open(path, newline='') as source:
        for row in csv.reader(source):
            if not row or [cell.strip() for cell in row] == COLUMNS:
                continue
            if len(row) != 5:
                raise SystemExit('detect.py: {}: rows are filename,ymin,xmin,ymax,xmax; got '
                                 '{!r}'.format(path, row))
            grouped.setdefault(row[0].strip(), []).append([float(v) for v in row[1:]])
    return [(name, np.array(windows)) for name, windows in grouped.items()]


def main(argv=None):
    parser = argparse.ArgumentParser(description='Classify image windows with a Caffe net.')
    parser.add_argument('input_file', help='CSV of windows: filename,ymin,xmin,ymax,xmax')
    parser.add_argument('output_file', help='CSV to write: the windows and their scores')
    add_net_arguments(parser, 'bvlc_reference_rcnn_ilsvrc13')
    parser.add_argument('--context_pad', type=int, default=16,
                        help='pixels of context around each window (default 16, as R-CNN)')
    args = parser.parse_args(argv)

    settings = net_settings(args, 'detect.py')
    detector = caffe.Detector(args.model_def, args.pretrained_model,
                              context_pad=args.context_pad, **settings)
    images_windows = read_windows(args.input_file)
    print('Classifying {} windows of {} images.'.format(
        sum(len(windows) for _, windows in images_windows), len(images_windows)))
    start = time.time()
    detections = detector.detect_windows(images_windows)
    print('Done in {:.2f} s.'.format(time.time() - start))
    with open(args.output_file, 'w', newline='') as output:
        writer = csv.writer(output, lineterminator='\n')
        classes = len(detections[0]['prediction']) if detections else 0
        writer.writerow(COLUMNS + ['class{}'.format(i) for i in range(classes)])
        for detection in detections:
            window = ['{:g}'.format(v) for v in detection['window']]
            scores = ['{:.6g}'.format(v) for v in np.ravel(detection['prediction'])]
            writer.writerow([detection['filename']] + window + scores)
    print('Saved {} rows to {}'.format(len(detections), args.output_file))
    return 0


if __name__ == '__main__':
    sys.exit(main())
