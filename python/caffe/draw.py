"""Drawing nets: a NetParameter (caffe_pb2) as a Graphviz graph, rendered by Graphviz's `dot`.

Layers are boxes (coloured by kind, with their main settings), blobs are grey octagons, and an
edge runs from each bottom blob to its layer and from each layer to its tops; an in-place layer
(top == bottom) points back at the blob it reads. get_dot_source returns the dot text;
draw_net renders it (png, svg, pdf, ... whatever `dot -T` takes); draw_net_to_file writes it.
"""
import os
import subprocess

from .proto import caffe_pb2

__all__ = ['get_dot_source', 'get_pydot_graph', 'draw_net', 'draw_net_to_file',
           'get_layer_label']

_LAYER_COLOURS = {
    'Convolution': '#FF5050', 'Deconvolution': '#FF5050',
    'Pooling': '#FF9900', 'SPP': '#FF9900',
    'InnerProduct': '#CC33FF', 'Embed': '#CC33FF',
    'Data': '#66CC66', 'ImageData': '#66CC66', 'HDF5Data': '#66CC66', 'MemoryData': '#66CC66',
    'Input': '#66CC66', 'DummyData': '#66CC66', 'Python': '#FFD700',
}
_DEFAULT_COLOUR = '#6495ED'
_LOSS_COLOUR = '#FF66B2'
_BLOB_COLOUR = '#E0E0E0'


def _quote(text):
    return '"' + str(text).replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') + '"'


def _spatial(values, default):
    """'5' or '3x5' from a repeated field (or its _h/_w twins)."""
    values = list(values)
    if not values:
        return str(default)
    if len(values) == 1 or len(set(values)) == 1:
        return str(values[0])
    return 'x'.join(str(v) for v in values)


def _pair(param, name, default):
    """A size setting: `name` (kernel_size, stride, pad) or its _h/_w form (kernel_h, ...)."""
    prefix = 'kernel' if name == 'kernel_size' else name
    if param.HasField(prefix + '_h') or param.HasField(prefix + '_w'):
        return '{}x{}'.format(getattr(param, prefix + '_h'), getattr(param, prefix + '_w'))
    value = getattr(param, name)
    if isinstance(value, int):
        return str(value if param.HasField(name) else default)
    return _spatial(value, default)


def get_layer_label(layer, rankdir='LR', display_lrm=False):
    """The text of a layer's box: name, type and its main settings."""
    lines = [layer.name, '(' + layer.type + ')']
    if layer.type in ('Convolution', 'Deconvolution'):
        param = layer.convolution_param
        lines.append('kernel {}, stride {}, pad {}'.format(
            _pair(param, 'kernel_size', 1), _pair(param, 'stride', 1), _pair(param, 'pad', 0)))
        lines.append('{} outputs'.format(param.num_output))
    elif layer.type == 'Pooling':
        param = layer.pooling_param
        method = caffe_pb2.PoolingParameter.PoolMethod.Name(param.pool)
        kernel = 'global' if param.global_pooling else _pair(param, 'kernel_size', 0)
        lines[1] = '({} Pooling)'.format(method)
        lines.append('kernel {}, stride {}, pad {}'.format(
            kernel, _pair(param, 'stride', 1), _pair(param, 'pad', 0)))
    elif layer.type == 'InnerProduct':
        lines.append('{} outputs'.format(layer.inner_product_param.num_output))
    elif layer.type == 'Data':
        param = layer.data_param
        lines.append('{} {}, batch {}'.format(
            caffe_pb2.DataParameter.DB.Name(param.backend), param.source, param.batch_size))
    elif layer.type == 'Input' and layer.input_param.shape:
        lines.append(' '.join('({})'.format(', '.join(str(d) for d in shape.dim))
                              for shape in layer.input_param.shape))
    elif layer.type == 'Python':
        lines.append('{}.{}'.format(layer.python_param.module, layer.python_param.layer))
    phases = [caffe_pb2.Phase.Name(rule.phase) for rule in layer.include if rule.HasField('phase')]
    if phases:
        lines.append('[' + ', '.join(phases) + ' only]')
    if display_lrm and layer.param:
        lines.append('lr mult ' + ', '.join('{:g}'.format(p.lr_mult) for p in layer.param) +
                     '; decay mult ' + ', '.join('{:g}'.format(p.decay_mult)
                                                 for p in layer.param))
    return '\n'.join(lines)


def _edge_label(layer):
    """What flows out of a layer, for the edges to its tops."""
    if layer.type == 'Data':
        return 'batch {}'.format(layer.data_param.batch_size)
    if layer.type in ('Convolution', 'Deconvolution'):
        return str(layer.convolution_param.num_output)
    if layer.type == 'InnerProduct':
        return str(layer.inner_product_param.num_output)
    return ''


def _in_phase(layer, phase):
    """Whether a layer's include/exclude rules (their phases) admit `phase`."""
    if phase is None:
        return True
    if layer.include:
        return any(not rule.HasField('phase') or rule.phase == phase for rule in layer.include)
    return not any(rule.HasField('phase') and rule.phase == phase for rule in layer.exclude)


def get_dot_source(caffe_net, rankdir='LR', label_edges=True, phase=None, display_lrm=False):
    """The Graphviz source of a NetParameter. phase: caffe.TRAIN or caffe.TEST to draw only the
    layers of that phase, None for all of them."""
    lines = ['digraph {} {{'.format(_quote(caffe_net.name or 'Net')),
             '  graph [rankdir={}, fontname="Helvetica", fontsize=14, nodesep=0.25, '
             'ranksep=0.35];'.format(rankdir),
             '  node [fontname="Helvetica", fontsize=12];',
             '  edge [fontname="Helvetica", fontsize=10, color="#404040"];']
    blob_nodes = set()

    def blob_node(name):
        node = 'blob:' + name
        if node not in blob_nodes:
            blob_nodes.add(node)
            lines.append('  {} [label={}, shape=octagon, style=filled, fillcolor="{}"];'.format(
                _quote(node), _quote(name), _BLOB_COLOUR))
        return _quote(node)

    for index, layer in enumerate(caffe_net.layer):
        if not _in_phase(layer, phase):
            continue
        node = _quote('layer:{}:{}'.format(index, layer.name))
        colour = _LAYER_COLOURS.get(layer.type, _DEFAULT_COLOUR)
        if layer.type.endswith('Loss'):
            colour = _LOSS_COLOUR
        lines.append('  {} [label={}, shape=box, style="rounded,filled", fillcolor="{}"];'.format(
            node, _quote(get_layer_label(layer, rankdir, display_lrm)), colour))
        for bottom in layer.bottom:
            lines.append('  {} -> {};'.format(blob_node(bottom), node))
        label = _edge_label(layer) if label_edges else ''
        for top in layer.top:
            attributes = ' [label={}]'.format(_quote(label)) if label else ''
            lines.append('  {} -> {}{};'.format(node, blob_node(top), attributes))
    lines.append('}')
    return '\n'.join(lines) + '\n'


def get_pydot_graph(caffe_net, rankdir='LR', label_edges=True, phase=None, display_lrm=False):
    """The graph as a pydot.Dot (needs the pydot package; get_dot_source does not)."""
    try:
        import pydot
    except ImportError:
        raise ImportError('get_pydot_graph needs pydot (python3-pydot); get_dot_source and '
                          'draw_net do not') from None
    source = get_dot_source(caffe_net, rankdir, label_edges, phase, display_lrm)
    return pydot.graph_from_dot_data(source)[0]


def draw_net(caffe_net, rankdir, ext='png', phase=None, display_lrm=False):
    """The net drawn by Graphviz in format `ext` (png, svg, pdf, ...), as bytes."""
    source = get_dot_source(caffe_net, rankdir, phase=phase, display_lrm=display_lrm)
    if ext in ('dot', 'gv'):
        return source.encode('utf-8')
    try:
        result = subprocess.run(['dot', '-T' + ext], input=source.encode('utf-8'),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    except FileNotFoundError:
        raise RuntimeError('drawing needs Graphviz\'s dot program (Debian: graphviz)') from None
    if result.returncode != 0:
        raise RuntimeError('dot -T{} failed: {}'.format(ext, result.stderr.decode(
            'utf-8', 'replace').strip()))
    return result.stdout


def draw_net_to_file(caffe_net, filename, rankdir='LR', phase=None, display_lrm=False):
    """Draws the net into `filename`, in the format its extension names (.png, .svg, .dot, ...)."""
    ext = os.path.splitext(filename)[1].lstrip('.').lower() or 'png'
    with open(filename, 'wb') as output:
        output.write(draw_net(caffe_net, rankdir, ext, phase, display_lrm))
