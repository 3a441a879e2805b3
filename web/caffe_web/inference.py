"""Classification with pycaffe on a model job's deploy net and one of its snapshots. An image is
prepared as the dataset's records were (the dataset's resize mode, colour or gray, B, G, R
order) and as the Data layer hands them to the net (minus the dataset's mean where the network
subtracts it, centre crop where it crops); the deploy net applies the Data layer's scale itself
(a Power layer), so the archive users download takes raw pixels minus the mean, as
classification.bin gives them."""
import base64
import io
import threading

import numpy as np
from PIL import Image

from . import datasets, resize

_nets = {}
_lock = threading.Lock()  # pycaffe nets are not shared between threads: one forward at a time


def _caffe():
    import caffe
    caffe.set_mode_cpu()
    caffe.init_log(1)  # the server's log keeps warnings and errors, not each net's set-up
    return caffe


def load_mean(path):
    """The mean image (C, H, W) of a .binaryproto."""
    caffe = _caffe()
    blob = caffe.proto.caffe_pb2.BlobProto()
    with open(path, 'rb') as source:
        blob.ParseFromString(source.read())
    return caffe.io.blobproto_to_array(blob)[0]


def _net(model_job, weights):
    key = (model_job.id, weights)
    net = _nets.get(key)
    if net is None:
        caffe = _caffe()
        if len(_nets) > 4:
            _nets.clear()
        net = _nets[key] = caffe.Net(model_job.path('deploy.prototxt'), caffe.TEST,
                                     weights=weights)
    return net


def open_image(data):
    """A PIL image from uploaded bytes; ValueError when they are not an image."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
        return image
    except Exception as error:  # PIL raises several types for a bad file
        raise ValueError('not an image PIL can read ({})'.format(type(error).__name__)) \
            from None


def prepare(image, dataset_job, model_job):
    """The net's input for one PIL image: (C, H, W) float32."""
    params = dataset_job.params
    channels, height, width = datasets.image_shape(params)
    pixels = np.asarray(resize.resize_image(image, width, height, params['resize_mode'],
                                            channels == 3), dtype=np.uint8)
    pixels = pixels[:, :, ::-1].transpose(2, 0, 1) if channels == 3 else pixels[np.newaxis]
    values = pixels.astype(np.float32)
    if model_job.params.get('uses_mean'):
        values = values - load_mean(dataset_job.path('mean.binaryproto')).astype(np.float32)
    net_height, net_width = _input_shape(model_job)[2:]
    top, left = (height - net_height) // 2, (width - net_width) // 2
    return values[:, top:top + net_height, left:left + net_width]


def _input_shape(model_job):
    from .networks import read_net
    net = read_net(model_job.path('deploy.prototxt'))
    return list(net.layer[0].input_param.shape[0].dim)


def classify(model_job, dataset_job, weights, images, batch_size=None):
    """The probabilities (N, classes) for PIL `images`."""
    inputs = np.stack([prepare(image, dataset_job, model_job) for image in images])
    batch_size = batch_size or len(inputs)
    with _lock:
        net = _net(model_job, weights)
        outputs = []
        for begin in range(0, len(inputs), batch_size):
            batch = inputs[begin:begin + batch_size]
            net.blobs['data'].reshape(*batch.shape)
            net.blobs['data'].data[...] = batch
            outputs.append(np.array(net.forward()['prob']).reshape(len(batch), -1))
    return np.concatenate(outputs)


def top_k(probabilities, labels, k=5):
    order = np.argsort(-probabilities)[:k]
    return [(int(i), labels[i] if i < len(labels) else str(i), float(probabilities[i]))
            for i in order]


def _png_data_uri(pixels):
    image = Image.fromarray(pixels)
    output = io.BytesIO()
    image.save(output, 'PNG')
    return 'data:image/png;base64,' + base64.b64encode(output.getvalue()).decode()


def grid(maps, scale_to=72, limit=64):
    """A PNG data URI of up to `limit` 2-D maps (each normalised to 0..255 on its own),
    tiled in a square grid, each at least `scale_to` pixels wide."""
    maps = [np.asarray(m, dtype=np.float32) for m in maps[:limit]]
    if not maps:
        return None
    height, width = maps[0].shape
    zoom = max(1, scale_to // max(height, width))
    columns = int(np.ceil(np.sqrt(len(maps))))
    rows = int(np.ceil(len(maps) / float(columns)))
    pad = 1
    canvas = np.full((rows * (height * zoom + pad) + pad, columns * (width * zoom + pad) + pad),
                     255, np.uint8)
    for index, values in enumerate(maps):
        low, high = float(values.min()), float(values.max())
        scaled = (values - low) / (high - low) if high > low else np.zeros_like(values)
        tile = np.kron((scaled * 255).astype(np.uint8), np.ones((zoom, zoom), np.uint8))
        row, column = divmod(index, columns)
        top, left = pad + row * (height * zoom + pad), pad + column * (width * zoom + pad)
        canvas[top:top + tile.shape[0], left:left + tile.shape[1]] = tile
    return _png_data_uri(canvas)


def visualizations(model_job, weights):
    """After classify() of one image: per layer, its output's channels as a grid and, for
    layers with weights, the filters as a grid and a histogram of the values, with their
    statistics."""
    layers = []
    with _lock:
        net = _net(model_job, weights)
        for name, blob in net.blobs.items():
            data = np.array(blob.data)[0]
            entry = {'name': name, 'kind': 'activation', 'shape': list(blob.data.shape),
                     'mean': float(data.mean()), 'std': float(data.std())}
            if data.ndim == 3:
                entry['image'] = grid(list(data))
            entry['histogram'] = _histogram(data)
            layers.append(entry)
            if name in net.params:
                weights_blob = np.array(net.params[name][0].data)
                entry = {'name': name, 'kind': 'weights', 'shape': list(weights_blob.shape),
                         'mean': float(weights_blob.mean()), 'std': float(weights_blob.std()),
                         'histogram': _histogram(weights_blob)}
                if weights_blob.ndim == 4:
                    entry['image'] = grid([f[0] for f in weights_blob])
                layers.append(entry)
    return layers


def _histogram(values, bins=20):
    counts, edges = np.histogram(np.asarray(values).ravel(), bins=bins)
    return {'counts': [int(c) for c in counts],
            'edges': [round(float(e), 5) for e in edges]}
