"""The standard networks (BVLC's prototxts in models/ and examples/) and any custom train_val,
fitted to a dataset: its databases, mean and batch size in the Data layers, its class count in
the classifiers; and the deploy net made from a fitted train_val (an Input layer of one image,
the data layer's scale as a Power layer, everything the scores do not need dropped, a Softmax
'prob' on the scores)."""
import os

from google.protobuf import text_format

from .forms import FormError

# key: (name shown, train_val prototxt in the checkout)
STANDARD = {
    'lenet': ('LeNet', 'examples/mnist/lenet_train_test.prototxt'),
    'alexnet': ('AlexNet', 'models/bvlc_alexnet/train_val.prototxt'),
    'caffenet': ('CaffeNet', 'models/bvlc_reference_caffenet/train_val.prototxt'),
    'googlenet': ('GoogLeNet', 'models/bvlc_googlenet/train_val.prototxt'),
    'cifar10_quick': ('CIFAR-10 quick', 'examples/cifar10/cifar10_quick_train_test.prototxt'),
    'resnet50': ('ResNet-50', 'models/resnet50/train_val.prototxt'),
}
LOSS_TYPES = ('SoftmaxWithLoss', 'MultinomialLogisticLoss', 'InfogainLoss',
              'SigmoidCrossEntropyLoss', 'HingeLoss')
DATA_TYPES = ('Data', 'ImageData', 'HDF5Data', 'MemoryData', 'DummyData', 'Input', 'WindowData')


def caffe_pb2():
    from caffe.proto import caffe_pb2 as module  # the build's, from caffe.proto
    return module


def read_net(path):
    net = caffe_pb2().NetParameter()
    with open(path) as source:
        text_format.Merge(source.read(), net)
    return net


def write_net(net, path):
    with open(path, 'w') as output:
        output.write(text_format.MessageToString(net))


def _phases(layer):
    pb = caffe_pb2()
    return {rule.phase for rule in layer.include if rule.HasField('phase')} or \
        {pb.TRAIN, pb.TEST}


def fit(net, dataset_job, batch_size, has_val):
    """Points the net's Data layers at the dataset, sets the classifiers' num_output to its
    class count; FormError (field 'Network') when the net cannot take it."""
    from . import datasets
    pb = caffe_pb2()
    params = dataset_job.params
    channels, height, width = datasets.image_shape(params)
    layers = list(net.layer)
    data_layers = [layer for layer in layers if layer.type == 'Data']
    if not any(pb.TRAIN in _phases(layer) for layer in data_layers):
        raise FormError('Network', "has no layer of type 'Data' for the TRAIN phase (the "
                        "dataset's databases are filled into its Data layers)")
    # By place in the net: BVLC's nets give both phases' data layers one name.
    dropped = set()
    for index, layer in enumerate(layers):
        if layer.type != 'Data':
            continue
        phase = pb.TRAIN if pb.TRAIN in _phases(layer) else pb.TEST
        if phase == pb.TEST and not has_val:
            dropped.add(index)
            continue
        layer.data_param.source = dataset_job.path('train_db' if phase == pb.TRAIN else 'val_db')
        layer.data_param.backend = pb.DataParameter.LMDB
        if batch_size:
            layer.data_param.batch_size = batch_size
        transform = layer.transform_param
        if transform.HasField('mean_file') or len(transform.mean_value):
            del transform.mean_value[:]
            transform.mean_file = dataset_job.path('mean.binaryproto')
        crop = transform.crop_size
        if crop and (crop > height or crop > width):
            raise FormError('Network', 'layer {} crops {}x{} but the dataset\'s images are {}x{};'
                            ' pick a dataset of at least that size'.format(
                                layer.name, crop, crop, width, height))
    if not has_val:  # the test phase's layers go with its data
        dropped.update(index for index, layer in enumerate(layers)
                       if _phases(layer) == {pb.TEST})
    kept = [pb.LayerParameter() for index in range(len(layers)) if index not in dropped]
    for copy, layer in zip(kept, [layer for index, layer in enumerate(layers)
                                  if index not in dropped]):
        copy.CopyFrom(layer)
    del net.layer[:]
    net.layer.extend(kept)
    classes = len(datasets.read_labels(dataset_job))
    producers = {}
    for layer in net.layer:
        for top in layer.top:
            producers.setdefault(top, layer)
    scored = [producers.get(layer.bottom[0]) for layer in net.layer
              if (layer.type in LOSS_TYPES or layer.type == 'Accuracy') and layer.bottom]
    classifiers = [layer for layer in scored if layer is not None and
                   layer.type in ('InnerProduct', 'Convolution')]
    if not classifiers:
        raise FormError('Network', 'no InnerProduct (or Convolution) layer feeds a loss layer; '
                        'cannot set the class count')
    for layer in classifiers:
        if layer.type == 'InnerProduct':
            layer.inner_product_param.num_output = classes
        else:
            layer.convolution_param.num_output = classes
    return net


def deploy(net, shape):
    """The deploy net of a fitted train_val `net` for images of `shape` (channels, height,
    width): an Input of one image as the Data layer hands it to the net (after its crop), its
    scale as a Power layer, the layers the last loss's scores need, and a Softmax 'prob'."""
    pb = caffe_pb2()
    data = next(layer for layer in net.layer if layer.type == 'Data')
    transform = data.transform_param
    channels, height, width = shape
    if transform.crop_size:
        height = width = transform.crop_size
    result = pb.NetParameter()
    result.name = net.name
    input_layer = result.layer.add(name='data', type='Input', top=[data.top[0]])
    input_layer.input_param.shape.add(dim=[1, channels, height, width])
    if transform.scale != 1:
        scale = result.layer.add(name='data_scale', type='Power', bottom=[data.top[0]],
                                 top=[data.top[0]])
        scale.power_param.scale = transform.scale
    layers = [layer for layer in net.layer if layer.type not in DATA_TYPES and
              layer.type not in LOSS_TYPES and layer.type != 'Accuracy' and
              pb.TEST in _phases(layer)]
    scores = [layer for layer in net.layer if layer.type in LOSS_TYPES][-1].bottom[0]
    # Walking back from the scores keeps what they depend on (GoogLeNet's side classifiers go).
    needed, kept = {scores}, []
    for layer in reversed(layers):
        if needed.intersection(layer.top):
            kept.append(layer)
            needed.update(layer.bottom)
    for layer in reversed(kept):
        copy = result.layer.add()
        copy.CopyFrom(layer)
        del copy.include[:]
    result.layer.add(name='prob', type='Softmax', bottom=[scores], top=['prob'])
    return result


def uses_mean(net):
    data = next(layer for layer in net.layer if layer.type == 'Data')
    return data.transform_param.HasField('mean_file')


def network_source(config, key):
    return os.path.join(config.source_dir, STANDARD[key][1])
