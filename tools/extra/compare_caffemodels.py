#!/usr/bin/env python3
"""Compares two .caffemodel files (binary NetParameter, as `caffe train` snapshots them) blob by
blob, and prints the largest relative difference: max |a - b| / max |b| within each blob, the
largest over the blobs, with the layer and blob it is in. With --tolerance, exits 1 when it is
larger. Files whose layers, blob counts or blob sizes differ are an error (exit 2).

    python3 tools/extra/compare_caffemodels.py run_a.caffemodel run_b.caffemodel
    python3 tools/extra/compare_caffemodels.py a.caffemodel b.caffemodel --tolerance 1e-3 \\
        --proto-dir bundle/proto        # caffe_pb2.py from there instead of pycaffe's

Standard library and protobuf's Python package only (caffe_pb2 from pycaffe, or --proto-dir).
"""
import argparse
import sys


def load_proto_module(proto_dir):
    if proto_dir:
        sys.path.insert(0, proto_dir)
        import caffe_pb2
        return caffe_pb2
    from caffe.proto import caffe_pb2
    return caffe_pb2


def blobs(caffe_pb2, path):
    """[(layer name, blob index, values)] of a caffemodel."""
    net = caffe_pb2.NetParameter()
    try:
        with open(path, 'rb') as stream:
            net.ParseFromString(stream.read())
    except (OSError, Exception) as error:  # protobuf's DecodeError has no common base here
        raise ValueError('{}: not a caffemodel ({})'.format(path, error))
    layers = net.layer or net.layers
    return [(layer.name, i, blob.data or blob.double_data)
            for layer in layers for i, blob in enumerate(layer.blobs)]


def largest_difference(a, b):
    """(difference, layer, blob index) of the blob pair that differs the most, relatively."""
    if [(name, i, len(v)) for name, i, v in a] != [(name, i, len(v)) for name, i, v in b]:
        raise ValueError('the two files hold different layers or blob sizes')
    worst = (0.0, None, None)
    for (name, index, left), (_, _, right) in zip(a, b):
        scale = max((abs(v) for v in right), default=0.0) or 1.0
        difference = max((abs(x - y) for x, y in zip(left, right)), default=0.0) / scale
        if difference > worst[0] or worst[1] is None:
            worst = (difference, name, index)
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('first')
    parser.add_argument('second', help='the reference: differences are relative to its blobs')
    parser.add_argument('--tolerance', type=float, help='exit 1 above this relative difference')
    parser.add_argument('--proto-dir', help='a folder holding caffe_pb2.py')
    args = parser.parse_args(argv)
    try:
        caffe_pb2 = load_proto_module(args.proto_dir)
        difference, layer, index = largest_difference(blobs(caffe_pb2, args.first),
                                                      blobs(caffe_pb2, args.second))
    except (ValueError, ImportError) as error:
        print('compare_caffemodels.py: error: {}'.format(error), file=sys.stderr)
        return 2
    where = ' (layer {}, blob {})'.format(layer, index) if layer is not None else ''
    print('largest relative difference: {:.3e}{}'.format(difference, where))
    if args.tolerance is not None and difference > args.tolerance:
        print('compare_caffemodels.py: above the tolerance {:g}'.format(args.tolerance),
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
