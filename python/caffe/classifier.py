"""Classifier: a Net that classifies images (H x W x K arrays, e.g. from caffe.io.load_image)."""
import numpy as np

from . import io
from .proto.caffe_pb2 import TEST
from .pycaffe import Net


def load_image_net(net, model_file, pretrained_file, mean=None, input_scale=None,
                   raw_scale=None, channel_swap=None):
    """Initializes `net` (a Net subclass instance) as a TEST-phase net with `pretrained_file`'s
    weights and gives it net.transformer for its first input, which takes H x W x K images
    (mean, input_scale, raw_scale, channel_swap as caffe.io.Transformer takes them). Returns
    the name of that input. Shared by Classifier and Detector."""
    Net.__init__(net, model_file, TEST, weights=pretrained_file)
    in_ = net.inputs[0]
    net.transformer = io.Transformer({in_: net.blobs[in_].data.shape})
    net.transformer.set_transpose(in_, (2, 0, 1))
    settings = (('set_mean', mean), ('set_input_scale', input_scale),
                ('set_raw_scale', raw_scale), ('set_channel_swap', channel_swap))
    for setter, value in settings:
        if value is not None:
            getattr(net.transformer, setter)(in_, value)
    return in_


def classify_images(net, images):
    """The net's first output for each image (H x W x K, at the input's size), preprocessed by
    net.transformer and run in batches of the net's batch size."""
    in_ = net.inputs[0]
    caffe_in = np.array([net.transformer.preprocess(in_, image) for image in images],
                        dtype=np.float32)
    return net.forward_all(**{in_: caffe_in})[net.outputs[0]]


class Classifier(Net):
    """A TEST-phase net with a Transformer for its first input.

    image_dims: the size (H, W) images are resized to before cropping to the net's input size
    (default: the input size). mean, input_scale, raw_scale, channel_swap: as caffe.io.Transformer
    takes them (mean per channel (K,) or a K x H x W image).
    """

    def __init__(self, model_file, pretrained_file, image_dims=None, mean=None,
                 input_scale=None, raw_scale=None, channel_swap=None):
        in_ = load_image_net(self, model_file, pretrained_file, mean, input_scale, raw_scale,
                             channel_swap)
        self.crop_dims = np.array(self.blobs[in_].data.shape[2:])
        self.image_dims = np.array(image_dims if image_dims is not None else self.crop_dims)

    def predict(self, inputs, oversample=True):
        """Class scores (N x classes) of the net's first output for a list of N images.

        oversample: average over ten crops per image (corners, centre, mirrored); else the
        centre crop only.
        """
        channels = inputs[0].shape[2]
        resized = np.zeros((len(inputs), self.image_dims[0], self.image_dims[1], channels),
                           dtype=np.float32)
        for index, image in enumerate(inputs):
            resized[index] = io.resize_image(image, self.image_dims)
        if oversample:
            crops = io.oversample(resized, self.crop_dims)
        else:
            top, left = ((self.image_dims - self.crop_dims) / 2.0).astype(int)
            crops = resized[:, top:top + self.crop_dims[0], left:left + self.crop_dims[1], :]
        predictions = classify_images(self, crops)
        if oversample:
            predictions = predictions.reshape((len(predictions) // 10, 10, -1)).mean(axis=1)
        return predictions
