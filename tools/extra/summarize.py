#!/usr/bin/env python3
"""Summarizes a net definition as a table, one line per layer, to check at a glance that the
prototxt computes what you meant (BVLC's tools/extra/summarize.py has the same purpose):

    summarize.py net.prototxt [--phase TRAIN|TEST]

columns: the layer's index, name, type, what defines it (outputs, window/stride and padding, groups
and dilation, pooling method, the phase or stage rules, learning-rate and decay multipliers that
differ from 1), and bottoms -> tops ("(in place)" when they coincide). With --phase, only the layers of that phase. Reads the file with caffe_pb2 (from
pycaffe's build) and needs no net set-up, so it works on nets whose data is absent.
"""
import argparse
import os
import sys

from google.protobuf import text_format


def _caffe_pb2():
    try:
        from caffe.proto import caffe_pb2
    except ImportError:
        sys.exit('summarize.py: caffe_pb2 not found: put build/python on PYTHONPATH')
    return caffe_pb2


def _window(values, single, height, width):
    """'5', '3x5' or '' from a repeated field and its _h/_w forms."""
    if height or width:
        return '{}x{}'.format(height, width)
    values = list(values)
    if not values:
        return str(single) if single is not None else ''
    if len(set(values)) == 1:
        return str(values[0])
    return 'x'.join(str(value) for value in values)


def _convolution(param):
    kernel = _window(param.kernel_size, None, param.kernel_h, param.kernel_w)
    stride = _window(param.stride, None, param.stride_h, param.stride_w) or '1'
    pad = _window(param.pad, None, param.pad_h, param.pad_w) or '0'
    text = '{} {}/{} pad {}'.format(param.num_output, kernel, stride, pad)
    if param.group > 1:
        text += ' group {}'.format(param.group)
    dilation = _window(param.dilation, None, 0, 0)
    if dilation and dilation != '1':
        text += ' dilation {}'.format(dilation)
    if not param.bias_term:
        text += ' no bias'
    return text


def _pooling(param, caffe_pb2):
    method = caffe_pb2.PoolingParameter.PoolMethod.Name(param.pool)
    if param.global_pooling:
        return method + ' global'
    kernel = _window([], param.kernel_size, param.kernel_h, param.kernel_w)
    stride = _window([], param.stride, param.stride_h, param.stride_w)
    pad = _window([], param.pad, param.pad_h, param.pad_w)
    return '{} {}/{} pad {}'.format(method, kernel, stride, pad)


def _details(layer, caffe_pb2):
    parts = []
    if layer.type in ('Convolution', 'Deconvolution'):
        parts.append(_convolution(layer.convolution_param))
    elif layer.type == 'Pooling':
        parts.append(_pooling(layer.pooling_param, caffe_pb2))
    elif layer.type == 'InnerProduct':
        parts.append(str(layer.inner_product_param.num_output))
    elif layer.type == 'LRN':
        lrn = layer.lrn_param
        parts.append('size {} alpha {:g} beta {:g}'.format(lrn.local_size, lrn.alpha, lrn.beta))
    elif layer.type == 'Dropout':
        parts.append('ratio {:g}'.format(layer.dropout_param.dropout_ratio))
    elif layer.type == 'Eltwise':
        parts.append(caffe_pb2.EltwiseParameter.EltwiseOp.Name(layer.eltwise_param.operation))
    elif layer.type in ('Data', 'ImageData'):
        batch = (layer.data_param.batch_size if layer.type == 'Data'
                 else layer.image_data_param.batch_size)
        source = (layer.data_param.source if layer.type == 'Data'
                  else layer.image_data_param.source)
        parts.append('batch {} from {}'.format(batch, source))
    elif layer.type == 'Input':
        parts.append(' '.join('x'.join(str(dim) for dim in shape.dim)
                              for shape in layer.input_param.shape))
    multipliers = [(spec.lr_mult, spec.decay_mult) for spec in layer.param]
    if any(pair != (1, 1) for pair in multipliers):
        parts.append('lr ' + ' '.join('{:g}'.format(lr) for lr, _ in multipliers) +
                     ' decay ' + ' '.join('{:g}'.format(decay) for _, decay in multipliers))
    rules = []
    for rule in layer.include:
        if rule.HasField('phase'):
            rules.append(caffe_pb2.Phase.Name(rule.phase))
        rules.extend('stage ' + stage for stage in rule.stage)
    if rules:
        parts.append('only ' + ', '.join(rules))
    return '; '.join(part for part in parts if part)


def summary_rows(net, phase=None):
    """(index, name, type, details, connections) for each layer (of `phase`, when given)."""
    caffe_pb2 = _caffe_pb2()
    rows = []
    for index, layer in enumerate(net.layer):
        phases = [rule.phase for rule in layer.include if rule.HasField('phase')]
        excluded = [rule.phase for rule in layer.exclude if rule.HasField('phase')]
        if phase is not None and ((phases and phase not in phases) or phase in excluded):
            continue
        bottoms, tops = ', '.join(layer.bottom), ', '.join(layer.top)
        if list(layer.bottom) == list(layer.top) and layer.top:
            connections = tops + ' (in place)'
        else:
            connections = '{} -> {}'.format(bottoms or '(none)', tops or '(none)')
        rows.append((str(index), layer.name, layer.type, _details(layer, caffe_pb2), connections))
    return rows


def format_table(rows):
    headers = ('#', 'name', 'type', 'definition', 'bottoms -> tops')
    widths = [max(len(row[i]) for row in [headers] + rows) for i in range(len(headers))]
    lines = []
    for row in [headers] + rows:
        lines.append('  '.join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description='Summarize a net definition, one line per '
                                                 'layer.')
    parser.add_argument('net', help='the net (.prototxt)')
    parser.add_argument('--phase', choices=('TRAIN', 'TEST'), help='only this phase\'s layers')
    args = parser.parse_args(argv)
    if not os.path.isfile(args.net):
        parser.error('no such file: ' + args.net)
    caffe_pb2 = _caffe_pb2()
    net = caffe_pb2.NetParameter()
    try:
        with open(args.net) as source:
            text_format.Merge(source.read(), net)
    except text_format.ParseError as error:
        # "1:19 : Message ..." -> "net.prototxt:1:19: Message ...", as the caffe tool says it.
        print('summarize.py: error: {}:{}'.format(args.net, str(error).replace(' : ', ': ', 1)),
              file=sys.stderr)
        return 1
    if not net.layer:
        print('summarize.py: error: {} has no layers (a V1 net? upgrade it with '
              'upgrade_net_proto_text)'.format(args.net), file=sys.stderr)
        return 1
    phase = caffe_pb2.Phase.Value(args.phase) if args.phase else None
    title = '{}: {} layers'.format(net.name or os.path.basename(args.net), len(net.layer))
    print(title)
    print(format_table(summary_rows(net, phase)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
