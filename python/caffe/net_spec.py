"""NetSpec: writing nets in Python instead of prototxt.

    from caffe import layers as L, params as P
    n = caffe.NetSpec()
    n.data, n.label = L.Data(source='train_lmdb', backend=P.Data.LMDB, batch_size=64,
                             transform_param=dict(scale=1. / 255), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20,
                            weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.conv1, in_place=True)
    n.loss = L.SoftmaxWithLoss(n.conv1, n.label)
    text = str(n.to_proto())          # prototxt

L.<Type>(*bottoms, **kwargs) makes a layer of that type. Keyword arguments go to the type's
parameter message (e.g. convolution_param) when it has a field of that name, else to the
LayerParameter (loss_weight, include, param, name, ...); names ending in `param` always go to
the LayerParameter. Dicts fill sub-messages, lists repeated fields, strings name enum values.
Special ones: ntop=k (number of tops; 0 returns the layer itself), in_place=True (the top
reuses the bottom's name). Layers and tops take the NetSpec attribute names they are assigned
to; unnamed ones are named after their type (Convolution1, ...). P.<Type>.<VALUE> gives the
enum values of <Type>Parameter (P.Pooling.MAX).
"""
from collections import Counter, OrderedDict

from google.protobuf import descriptor, message

from .proto import caffe_pb2

__all__ = ['NetSpec', 'Top', 'Function', 'layers', 'params', 'to_proto', 'param_name_dict',
           'assign_proto']

# Layer types whose parameter message is named after another type.
_SHARED_PARAMETERS = {
    'Deconvolution': 'convolution',
    'LSTM': 'recurrent',
    'RNN': 'recurrent',
    'SoftmaxWithLoss': 'softmax',
}


def param_name_dict():
    """Layer type -> the name of its parameter field without `_param` ('InnerProduct' ->
    'inner_product'), from the <Type>Parameter messages of LayerParameter's fields."""
    names = {}
    for field in caffe_pb2.LayerParameter.DESCRIPTOR.fields:
        if field.message_type is None or not field.name.endswith('_param'):
            continue
        type_name = field.message_type.name
        if type_name.endswith('Parameter'):
            names[type_name[:-len('Parameter')]] = field.name[:-len('_param')]
    names.update(_SHARED_PARAMETERS)
    return names


_PARAM_NAMES = param_name_dict()


def _field_value(field, value):
    """`value` for a scalar field: enum names (strings) become their numbers."""
    if field.type == descriptor.FieldDescriptor.TYPE_ENUM and isinstance(value, str):
        enum_value = field.enum_type.values_by_name.get(value)
        if enum_value is None:
            raise ValueError('{!r} is not a value of {}.{}; its values are: {}'.format(
                value, field.containing_type.name, field.name,
                ', '.join(field.enum_type.values_by_name)))
        return enum_value.number
    return value


def _fill_message(target, value):
    if isinstance(value, message.Message):
        target.CopyFrom(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            assign_proto(target, key, item)
    else:
        raise TypeError('{} takes a dict (or a {} message), got {!r}'.format(
            target.DESCRIPTOR.name, target.DESCRIPTOR.name, value))


def assign_proto(proto, name, value):
    """Sets field `name` of message `proto`: dicts fill sub-messages, lists (or single values)
    repeated fields. Raises AttributeError naming the message for an unknown field."""
    field = proto.DESCRIPTOR.fields_by_name.get(name)
    if field is None:
        raise AttributeError('{!r} is not a field of {}'.format(name, proto.DESCRIPTOR.name))
    is_message = field.type == descriptor.FieldDescriptor.TYPE_MESSAGE
    if field.label == descriptor.FieldDescriptor.LABEL_REPEATED:
        values = value if isinstance(value, (list, tuple)) else [value]
        repeated = getattr(proto, name)
        for item in values:
            if is_message:
                _fill_message(repeated.add(), item)
            else:
                repeated.append(_field_value(field, item))
    elif is_message:
        _fill_message(getattr(proto, name), value)
    else:
        setattr(proto, name, _field_value(field, value))


class Top(object):
    """One top (output) of a layer function: what NetSpec attributes and layer arguments hold."""

    def __init__(self, fn, n):
        self.fn = fn
        self.n = n

    def to_proto(self):
        """A NetParameter with this top's layer and every layer it depends on."""
        return to_proto(self)

    def _to_proto(self, layers, names, autonames):
        return self.fn._to_proto(layers, names, autonames)


class Function(object):
    """A layer: its type, its bottoms (Tops) and its parameters."""

    def __init__(self, type_name, inputs, params):
        self.type_name = type_name
        for index, bottom in enumerate(inputs):
            if not isinstance(bottom, Top):
                # BVLC's words first (user code matches them), then which bottom and what to do.
                raise TypeError('{} input {} is not a Top (type is {}): {} layer: bottom {} is '
                                '{!r}, not a top of another layer (pass n.<name>, or a layer '
                                'function\'s result)'.format(type_name, index, type(bottom),
                                                             type_name, index, bottom))
        self.inputs = inputs
        self.params = dict(params)
        self.ntop = self.params.pop('ntop', 1)
        self.in_place = self.params.pop('in_place', False)
        if self.in_place and self.ntop != len(inputs):
            raise ValueError('{} layer: in_place needs as many tops as bottoms ({} vs. {})'
                             .format(type_name, self.ntop, len(inputs)))
        self.tops = tuple(Top(self, n) for n in range(self.ntop))

    def _get_name(self, names, autonames):
        if self not in names:
            if self.ntop > 0:
                names[self] = self._get_top_name(self.tops[0], names, autonames)
            else:
                autonames[self.type_name] += 1
                names[self] = self.type_name + str(autonames[self.type_name])
        return names[self]

    def _get_top_name(self, top, names, autonames):
        if top not in names:
            autonames[top.fn.type_name] += 1
            names[top] = top.fn.type_name + str(autonames[top.fn.type_name])
        return names[top]

    def _to_proto(self, layers, names, autonames):
        if self in layers:
            return
        bottom_names = []
        for bottom in self.inputs:
            bottom._to_proto(layers, names, autonames)
            bottom_names.append(layers[bottom.fn].top[bottom.n])
        layer = caffe_pb2.LayerParameter()
        layer.type = self.type_name
        layer.bottom.extend(bottom_names)
        if self.in_place:
            layer.top.extend(layer.bottom)
        else:
            layer.top.extend(self._get_top_name(top, names, autonames) for top in self.tops)
        layer.name = self._get_name(names, autonames)
        type_param_field = _PARAM_NAMES.get(self.type_name)
        for key, value in self.params.items():
            type_param = None
            if not key.endswith('param') and type_param_field is not None:
                type_param = getattr(layer, type_param_field + '_param')
            if type_param is not None and key in type_param.DESCRIPTOR.fields_by_name:
                assign_proto(type_param, key, value)
            elif key in layer.DESCRIPTOR.fields_by_name:
                assign_proto(layer, key, value)
            else:
                raise AttributeError('{} layer {!r}: {!r} is a field of neither LayerParameter '
                                     'nor {}'.format(self.type_name, layer.name, key,
                                                     type(type_param).__name__
                                                     if type_param is not None
                                                     else 'a parameter message of this type'))
        layers[self] = layer


class NetSpec(object):
    """A net being written: assign layer functions' tops to its attributes (n.conv1 = ...);
    to_proto() returns the NetParameter, the attribute names naming layers and tops."""

    def __init__(self):
        super(NetSpec, self).__setattr__('tops', OrderedDict())

    def __setattr__(self, name, value):
        self.tops[name] = value

    def __getattr__(self, name):
        try:
            return self.tops[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setitem__(self, key, value):
        self.tops[key] = value

    def __getitem__(self, item):
        return self.tops[item]

    def __delitem__(self, name):
        del self.tops[name]

    def keys(self):
        return list(self.tops.keys())

    def vals(self):
        return list(self.tops.values())

    def to_proto(self):
        names = {top: name for name, top in self.tops.items()}
        autonames = Counter()
        layers = OrderedDict()
        for top in self.tops.values():
            top._to_proto(layers, names, autonames)
        net = caffe_pb2.NetParameter()
        net.layer.extend(layers.values())
        return net


def to_proto(*tops):
    """A NetParameter with the layers the tops need (names from their types)."""
    layers = OrderedDict()
    autonames = Counter()
    for top in tops:
        top.fn._to_proto(layers, {}, autonames)
    net = caffe_pb2.NetParameter()
    net.layer.extend(layers.values())
    return net


class Layers(object):
    """layers.<Type>(*bottoms, **params): a layer function of that type (see the module doc)."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)

        def layer_fn(*args, **kwargs):
            fn = Function(name, args, kwargs)
            if fn.ntop == 0:
                return fn
            if fn.ntop == 1:
                return fn.tops[0]
            return fn.tops
        return layer_fn


class Parameters(object):
    """params.<Type>.<NAME>: the enum value NAME of <Type>Parameter (params.Pooling.MAX)."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        message_class = getattr(caffe_pb2, name + 'Parameter', None)
        if message_class is None:
            raise AttributeError('caffe.proto has no message {}Parameter'.format(name))

        class Param(object):
            def __getattr__(self, param_name):
                if param_name.startswith('__'):
                    raise AttributeError(param_name)
                return getattr(message_class, param_name)
        return Param()


layers = Layers()
params = Parameters()
