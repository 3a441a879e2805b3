"""Spatial coordinate maps between the tops of a caffe.NetSpec net (BVLC's caffe.coord_map).

Fully convolutional nets (FCN) pad, stride and upsample, so a score map and the image it scores
are offset from each other. crop(top_from, top_to) works out that offset from the layers
between them and returns the Crop layer that cuts top_from to top_to's coordinates:

    from caffe.coord_map import crop
    n.score = crop(n.upscore, n.data)     # Crop(upscore, data), axis 2, offset (19, 19) in FCN-32s

A map is a tuple (axis, a, b): along the spatial axes after `axis` (the channel axis; None for
a map that leaves every axis alone), coordinate x of a layer's bottom lands at a * x + b in its
top; a and b hold one value per spatial axis (numpy arrays) or one for all.
"""
import numpy as np

from .net_spec import layers as L

# Layers whose top has their (first) bottom's spatial coordinates.
PASS_THROUGH_LAYERS = frozenset([
    'AbsVal', 'BatchNorm', 'Bias', 'BNLL', 'Clip', 'Dropout', 'Eltwise', 'ELU', 'Exp', 'Log',
    'LRN', 'MVN', 'Power', 'PReLU', 'ReLU', 'Scale', 'Sigmoid', 'Split', 'Swish', 'TanH',
    'Threshold',
])
# Layers that do so when they work along the channel axis (their `axis`, default 1).
CHANNEL_AXIS_LAYERS = {'Concat': 'concat_param', 'Softmax': 'softmax_param'}

IDENTITY = (None, 1, 0)


class UndefinedMapException(Exception):
    """The layer has no spatial coordinate map (a fully connected layer, global pooling, a
    reshape, or a type this module does not know)."""


def _params(fn, message):
    """fn's parameters of `message` ('convolution_param'): given as that keyword or, as
    net_spec allows, as keywords of the layer function itself."""
    nested = fn.params.get(message)
    return nested if isinstance(nested, dict) else fn.params


def _per_axis(params, name, default, two_d_names=None):
    """A repeated or scalar field as an array, with `default` where unset; `two_d_names`
    ('kernel_h', 'kernel_w') are used when set, as Caffe does."""
    if two_d_names and any(key in params for key in two_d_names):
        return np.array([params[key] for key in two_d_names], dtype=float)
    value = params.get(name, default)
    array = np.array(value, dtype=float, ndmin=1)
    return np.array([default], dtype=float) if array.size == 0 else array


def conv_params(fn):
    """(axis, stride, kernel extent minus one, pad) of a Convolution, Deconvolution or Pooling
    layer function, one value per spatial axis."""
    if fn.type_name == 'Pooling':
        params = _params(fn, 'pooling_param')
        if params.get('global_pooling'):
            raise UndefinedMapException('{} layer with global_pooling'.format(fn.type_name))
        axis = 1
        kernel = _per_axis(params, 'kernel_size', 1, ('kernel_h', 'kernel_w'))
        dilation = np.array([1.0])
    else:
        params = _params(fn, 'convolution_param')
        axis = params.get('axis', 1)
        kernel = _per_axis(params, 'kernel_size', 1, ('kernel_h', 'kernel_w'))
        dilation = _per_axis(params, 'dilation', 1)
    stride = _per_axis(params, 'stride', 1, ('stride_h', 'stride_w'))
    pad = _per_axis(params, 'pad', 0, ('pad_h', 'pad_w'))
    extent = (kernel - 1) * dilation
    return axis, stride, extent, pad


def crop_params(fn):
    """(axis, offset) of a Crop layer function: the first cropped axis (default 2) and the
    offsets (one for all cropped axes, or one each)."""
    params = _params(fn, 'crop_param')
    axis = params.get('axis', 2)
    offset = np.array(params.get('offset', 0), dtype=float, ndmin=1)
    return axis, (np.zeros(1) if offset.size == 0 else offset)


def coord_map(fn):
    """The map from fn's (first) bottom's coordinates to its top's. Raises
    UndefinedMapException for a layer without one."""
    if fn.type_name in ('Convolution', 'Pooling', 'Im2col'):
        axis, stride, extent, pad = conv_params(fn)
        # Top x reads the window centred at stride * x + extent / 2 - pad.
        return axis, 1 / stride, (pad - extent / 2) / stride
    if fn.type_name == 'Deconvolution':
        axis, stride, extent, pad = conv_params(fn)
        return axis, stride, extent / 2 - pad
    if fn.type_name == 'Crop':
        axis, offset = crop_params(fn)
        return axis - 1, 1, -offset
    if fn.type_name in PASS_THROUGH_LAYERS:
        return IDENTITY
    if fn.type_name in CHANNEL_AXIS_LAYERS:
        if _params(fn, CHANNEL_AXIS_LAYERS[fn.type_name]).get('axis', 1) == 1:
            return IDENTITY
        raise UndefinedMapException('{} layer along a spatial axis'.format(fn.type_name))
    raise UndefinedMapException('no spatial coordinate map for {} layers'.format(fn.type_name))


def _axis_of(first, second):
    if first is None:
        return second
    if second is not None and second != first:
        raise AssertionError('the maps have different axes ({} and {})'.format(first, second))
    return first


def compose(base_map, next_map):
    """The map that applies base_map, then next_map."""
    axis = _axis_of(base_map[0], next_map[0])
    a = next_map[1] * base_map[1]
    b = next_map[1] * base_map[2] + next_map[2]
    return axis, a, b


def inverse(coord):
    """The map that undoes `coord`."""
    axis, a, b = coord
    return axis, 1 / a, -b / a


def _bottoms(top):
    """The bottoms whose coordinates top's layer maps from: all of them, except that a Crop
    only takes its shape from the second."""
    inputs = top.fn.inputs
    return inputs[:1] if top.fn.type_name == 'Crop' else inputs


def _maps_to(top):
    """For every top upstream of `top` through layers that have maps, the map from its
    coordinates to top's (top itself: the identity), nearest first."""
    maps = {top: IDENTITY}
    frontier = [top]
    while frontier:
        current = frontier.pop(0)
        try:
            step = coord_map(current.fn)
        except UndefinedMapException:
            continue
        for bottom in _bottoms(current):
            if bottom not in maps:
                maps[bottom] = compose(step, maps[current])
                frontier.append(bottom)
    return maps


def coord_map_from_to(top_from, top_to):
    """The map from top_from's coordinates to top_to's, through their nearest common ancestor
    (either one may be the other's). Raises RuntimeError where no chain of layers with maps
    joins them."""
    from_maps = _maps_to(top_from)
    to_maps = _maps_to(top_to)
    for ancestor, to_map in to_maps.items():
        if ancestor in from_maps:
            return compose(inverse(from_maps[ancestor]), to_map)
    raise RuntimeError('could not compute the map between the tops: they are not connected '
                       'through spatial layers (Convolution, Pooling, Deconvolution, Crop and '
                       'pointwise layers)')


def crop(top_from, top_to):
    """A Crop layer function that cuts top_from to the coordinates of top_to (the crop's
    reference), with the axis and offsets worked out from the layers between them. Raises
    AssertionError where that is no crop: the scales differ, or top_to would need top_from
    shifted by a negative or fractional amount."""
    axis, a, b = coord_map_from_to(top_from, top_to)
    if axis is None:
        axis = 1
    a = np.array(a, dtype=float, ndmin=1)
    b = np.array(b, dtype=float, ndmin=1)
    if not np.all(a == 1):
        raise AssertionError('scale mismatch on crop: a = {} (the tops are not at the same '
                             'resolution)'.format(a))
    if not np.all(b <= 0):
        raise AssertionError('cannot crop a negative offset: b = {} (top_from would have to '
                             'be smaller than top_to)'.format(b))
    if not np.all(np.round(b) == b):
        raise AssertionError('cannot crop a fractional offset: b = {}'.format(b))
    offset = [int(value) for value in -np.round(b)]
    return L.Crop(top_from, top_to, crop_param=dict(axis=axis + 1, offset=offset))
