#!/usr/bin/env python3
"""Draws a net (a .prototxt) as an image with Graphviz:

    draw_net.py NET.prototxt OUT.png [--rankdir LR|TB|BT|RL] [--phase TRAIN|TEST|ALL]
                [--display_lrm]

The output format follows OUT's extension (png, svg, pdf, dot, ...). --phase draws only the
layers of one phase (default ALL). Needs Graphviz's `dot` (Debian: graphviz).
"""
import argparse
import sys

import _build_tree  # this folder: the scripts' helper

_build_tree.prefer_built_caffe()
from google.protobuf import text_format  # noqa: E402

import caffe  # noqa: E402
import caffe.draw  # noqa: E402
from caffe.proto import caffe_pb2  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description='Draw a Caffe net with Graphviz.')
    parser.add_argument('input_net_proto_file', help='the net (.prototxt)')
    parser.add_argument('output_image_file', help='the image to write (.png, .svg, ...)')
    parser.add_argument('--rankdir', default='LR', choices=['LR', 'TB', 'BT', 'RL'],
                        help='direction of the graph: left-right (default), top-bottom, ...')
    parser.add_argument('--phase', default='ALL', choices=['TRAIN', 'TEST', 'ALL'],
                        help='draw the layers of this phase only (default: all layers)')
    parser.add_argument('--display_lrm', action='store_true',
                        help='show each layer\'s lr_mult and decay_mult')
    args = parser.parse_args(argv)
    net = caffe_pb2.NetParameter()
    path = args.input_net_proto_file
    try:
        with open(path) as source:
            text_format.Merge(source.read(), net)
    except OSError as error:
        parser.error('cannot read {}: {}'.format(path, error.strerror))
    except text_format.ParseError as error:
        parser.error('{} is not a valid net prototxt: {}'.format(path, error))
    phase = {'TRAIN': caffe.TRAIN, 'TEST': caffe.TEST, 'ALL': None}[args.phase]
    print('Drawing net to ' + args.output_image_file)
    try:
        caffe.draw.draw_net_to_file(net, args.output_image_file, args.rankdir, phase,
                                    args.display_lrm)
    except (OSError, RuntimeError) as error:  # no Graphviz, an unknown format, an unwritable path
        print('draw_net.py: error: ' + str(error), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
