"""BVLC's Python-level interface to nets and solvers, added onto the compiled classes of _caffe.

Net gets the attributes pycaffe users know: blobs, params, layers, layer_dict, inputs, outputs,
blob_loss_weights, top_names, bottom_names (ordered dicts or lists, in the net's order), and
forward(**inputs), backward(**diffs), forward_all, forward_backward_all, set_input_arrays. Blob
arrays (net.blobs['x'].data, .diff, net.params['conv1'][0].data) are numpy views onto the net's
memory: writing into them changes the net.
"""
from collections import OrderedDict

import numpy as np

from ._caffe import (AdaDeltaSolver, AdaGradSolver, AdamSolver, Net, NesterovSolver,
                     RMSPropSolver, SGDSolver, Solver, Timer)

__all__ = ['Net', 'Solver', 'SGDSolver', 'NesterovSolver', 'AdaGradSolver', 'RMSPropSolver',
           'AdaDeltaSolver', 'AdamSolver', 'Timer']


def _cached(name, build):
    """A read-only property computed once per net (the graph of a net does not change)."""
    def getter(self):
        try:
            return self.__dict__[name]
        except KeyError:
            value = self.__dict__[name] = build(self)
            return value
    getter.__doc__ = build.__doc__
    return property(getter)


def _net_blobs(net):
    """OrderedDict: blob name -> caffe.Blob (its .data and .diff are numpy views)."""
    return OrderedDict(zip(net._blob_names, net._blobs))


def _net_blob_loss_weights(net):
    """OrderedDict: blob name -> loss weight (0 for blobs that are not losses)."""
    return OrderedDict(zip(net._blob_names, net._blob_loss_weights))


def _net_layer_dict(net):
    """OrderedDict: layer name -> layer."""
    return OrderedDict(zip(net._layer_names, net.layers))


def _net_params(net):
    """OrderedDict: layer name -> its learned blobs, for the layers that have some."""
    return OrderedDict((name, layer.blobs) for name, layer in zip(net._layer_names, net.layers)
                       if len(layer.blobs) > 0)


def _net_inputs(net):
    """The names of the net's input blobs (those of its Input layers)."""
    return [net._blob_names[i] for i in net._inputs]


def _net_outputs(net):
    """The names of the net's output blobs (tops that no layer consumes)."""
    return [net._blob_names[i] for i in net._outputs]


def _net_top_names(net):
    """OrderedDict: layer name -> the names of its top blobs."""
    return OrderedDict((name, [net._blob_names[b] for b in net._top_ids(i)])
                       for i, name in enumerate(net._layer_names))


def _net_bottom_names(net):
    """OrderedDict: layer name -> the names of its bottom blobs."""
    return OrderedDict((name, [net._blob_names[b] for b in net._bottom_ids(i)])
                       for i, name in enumerate(net._layer_names))


def _layer_index(net, name, what):
    try:
        return list(net._layer_names).index(name)
    except ValueError:
        raise KeyError("{}={!r}: the net has no layer of that name; its layers are: {}".format(
            what, name, ', '.join(net._layer_names))) from None


def _check_blob_names(net, names, what):
    unknown = [name for name in names if name not in net.blobs]
    if unknown:
        raise KeyError('{}: the net has no blob named {}; its blobs are: {}'.format(
            what, ', '.join(repr(n) for n in unknown), ', '.join(net._blob_names)))


def _fill(net, values, attribute, allowed, role):
    """Copies `values` (blob name -> array) into the blobs' data or diff."""
    for name, value in values.items():
        if name not in allowed:
            raise KeyError('{!r} is not {} of the net; they are: {}'.format(
                name, role, ', '.join(allowed) or '(none)'))
        blob = net.blobs[name]
        value = np.asarray(value)
        if value.ndim > 0 and blob.data.ndim > 0 and value.shape[0] != blob.shape[0]:
            raise ValueError('{!r} has {} items but the blob holds a batch of {} (shape {}); '
                             'reshape it first: net.blobs[{!r}].reshape(...), net.reshape()'
                             .format(name, value.shape[0], blob.shape[0], blob.shape, name))
        target = getattr(blob, attribute)
        try:
            target[...] = value
        except ValueError:
            raise ValueError('cannot put an array of shape {} into blob {!r} of shape {}'.format(
                value.shape, name, blob.shape)) from None


def _net_forward(self, blobs=None, start=None, end=None, **kwargs):
    """Runs forward, from layer `start` to layer `end` (names; default all layers).

    kwargs: input blob name -> array, copied into the blob first. Returns a dict: blob name ->
    its data (a view), for the net's outputs (or, with `end`, the tops of that layer) and the
    names in `blobs`.
    """
    blobs = list(blobs or [])
    _check_blob_names(self, blobs, 'forward(blobs=...)')
    start_index = 0 if start is None else _layer_index(self, start, 'start')
    if end is None:
        end_index = len(self._layer_names) - 1
        outputs = self.outputs + blobs
    else:
        end_index = _layer_index(self, end, 'end')
        outputs = ([end] if end in self.blobs else self.top_names[end]) + blobs
    if start_index > end_index:
        raise ValueError('forward: start layer {!r} comes after end layer {!r}'.format(start, end))
    _fill(self, kwargs, 'data', self.inputs, 'an input')
    self._forward(start_index, end_index)
    return {name: self.blobs[name].data for name in outputs}


def _net_backward(self, diffs=None, start=None, end=None, **kwargs):
    """Runs backward, from layer `start` down to layer `end` (names; default all layers).

    kwargs: output blob name -> array, copied into the blob's diff first. Returns a dict: blob
    name -> its diff (a view), for the net's inputs (or, with `end`, the bottoms of that layer)
    and the names in `diffs`.
    """
    diffs = list(diffs or [])
    _check_blob_names(self, diffs, 'backward(diffs=...)')
    start_index = len(self._layer_names) - 1 if start is None else _layer_index(
        self, start, 'start')
    if end is None:
        end_index = 0
        outputs = self.inputs + diffs
    else:
        end_index = _layer_index(self, end, 'end')
        outputs = ([end] if end in self.blobs else self.bottom_names[end]) + diffs
    if end_index > start_index:
        raise ValueError('backward: end layer {!r} comes after start layer {!r}'.format(
            end, start))
    _fill(self, kwargs, 'diff', self.outputs, 'an output')
    self._backward(start_index, end_index)
    return {name: self.blobs[name].diff for name in outputs}


def _batch_size(net, names):
    """Items per batch: the first axis of the net's first input (else of the first named blob)."""
    for name in list(net.inputs) + list(names):
        shape = net.blobs[name].shape
        if shape:
            return shape[0]
    raise ValueError('cannot tell the batch size: the blobs have no axes')


def _net_batches(self, arrays):
    """Splits arrays of N items (name -> array) into the net's batch size; the last batch is
    padded with zeros. Yields name -> batch dicts."""
    count = len(next(iter(arrays.values())))
    for name, array in arrays.items():
        if len(array) != count:
            raise ValueError('inputs differ in length: {} has {} items, {} has {}'.format(
                next(iter(arrays)), count, name, len(array)))
    batch_size = _batch_size(self, arrays)
    for begin in range(0, count, batch_size):
        batch = {}
        for name, array in arrays.items():
            chunk = np.asarray(array[begin:begin + batch_size])
            if len(chunk) < batch_size:
                padding = np.zeros((batch_size - len(chunk),) + chunk.shape[1:], chunk.dtype)
                chunk = np.concatenate([chunk, padding])
            batch[name] = chunk
        yield batch


def _collect(results, count):
    """Stacks per-batch results and drops the padding beyond `count` items. Scalars (losses,
    accuracies) give one value per batch."""
    collected = {}
    for name, parts in results.items():
        if not parts:
            collected[name] = np.empty((0,), dtype=np.float32)
        elif parts[0].ndim == 0:
            collected[name] = np.array(parts)
        else:
            collected[name] = np.concatenate(parts)[:count]
    return collected


def _net_forward_all(self, blobs=None, **kwargs):
    """forward() over inputs of any number of items, in batches of the net's batch size.

    Returns a dict: blob name -> array with one entry per input item (copies).
    """
    if not kwargs:
        return {name: np.copy(value) for name, value in self.forward(blobs=blobs).items()}
    count = len(next(iter(kwargs.values())))
    results = {name: [] for name in self.outputs + list(blobs or [])}
    for batch in self._batch(kwargs):
        for name, value in self.forward(blobs=blobs, **batch).items():
            results[name].append(np.copy(value))
    return _collect(results, count)


def _net_forward_backward_all(self, blobs=None, diffs=None, **kwargs):
    """forward() then backward() over any number of items, in batches.

    kwargs: input arrays (net inputs) and output diffs (net outputs). Returns (outputs, diffs):
    dicts of blob name -> array with one entry per item.
    """
    inputs = {name: value for name, value in kwargs.items() if name in self.inputs}
    output_diffs = {name: value for name, value in kwargs.items() if name in self.outputs}
    unknown = set(kwargs) - set(inputs) - set(output_diffs)
    if unknown:
        raise KeyError('{} are neither inputs ({}) nor outputs ({}) of the net'.format(
            ', '.join(sorted(unknown)), ', '.join(self.inputs), ', '.join(self.outputs)))
    if not inputs and not output_diffs:
        raise ValueError('forward_backward_all needs inputs or output diffs')
    count = len(next(iter(kwargs.values())))
    forward_results = {name: [] for name in self.outputs + list(blobs or [])}
    backward_results = {name: [] for name in self.inputs + list(diffs or [])}
    input_batches = self._batch(inputs) if inputs else None
    diff_batches = self._batch(output_diffs) if output_diffs else None
    for _ in range(0, count, _batch_size(self, kwargs)):
        batch = next(input_batches) if input_batches else {}
        diff_batch = next(diff_batches) if diff_batches else {}
        for name, value in self.forward(blobs=blobs, **batch).items():
            forward_results[name].append(np.copy(value))
        for name, value in self.backward(diffs=diffs, **diff_batch).items():
            backward_results[name].append(np.copy(value))
    return _collect(forward_results, count), _collect(backward_results, count)


def _net_set_input_arrays(self, data, labels):
    """Feeds a net whose first layer is MemoryData from arrays: data (N, C, H, W), labels (N)."""
    data = np.ascontiguousarray(data, dtype=np.float32)
    labels = np.ascontiguousarray(np.asarray(labels, dtype=np.float32).reshape(-1, 1, 1, 1))
    self._set_input_arrays(data, labels)
    # The layer reads the arrays in place: they live as long as the net uses them.
    self.__dict__['_input_arrays'] = (data, labels)


Net.blobs = _cached('_blobs_dict', _net_blobs)
Net.blob_loss_weights = _cached('_blob_loss_weights_dict', _net_blob_loss_weights)
Net.layer_dict = _cached('_layer_dict', _net_layer_dict)
Net.params = _cached('_params_dict', _net_params)
Net.inputs = _cached('_input_list', _net_inputs)
Net.outputs = _cached('_output_list', _net_outputs)
Net.top_names = _cached('_top_names', _net_top_names)
Net.bottom_names = _cached('_bottom_names', _net_bottom_names)
Net.forward = _net_forward
Net.backward = _net_backward
Net.forward_all = _net_forward_all
Net.forward_backward_all = _net_forward_backward_all
Net.set_input_arrays = _net_set_input_arrays
Net._batch = _net_batches


def _solver_param(self):
    """The solver's SolverParameter (a caffe_pb2 message; a copy)."""
    from .proto import caffe_pb2
    return caffe_pb2.SolverParameter.FromString(self._param_bytes)


Solver.param = property(_solver_param)
