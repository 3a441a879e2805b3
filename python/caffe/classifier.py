"""Classifier: a Net that classifies images (H x W x K arrays, e.g. from caffe.io.load_image)."""
import numpy as np

from . import io
from .proto.caffe_pb2 import TEST
from .pycaffe import Net


class Classifier(Net):
    """A TEST-phase net with a Transformer for its first input.

    image_dims: the size (H, W) images are resized to before cropping to the net's input size
    (default: the input size). mean, input_scale, raw_scale, channel_swap: as caffe.io.Transformer
    takes them (mean per channel (K,) or a K x H x W image).
    """

    def __init__(self, model_file, pretrained_file, image_dims=None, mean=None,
                 input_scale=None, raw_scale=None, channel_swap=None):
        Net.__init__(self, model_file, TEST, weights=pretrained_file)
        in_ = self.inputs[0]
        self.transformer = io.Transformer({in_: self.blobs[in_].data.shape})
        self.transformer.set_transpose(in_, (2, 0, 1))
        if mean is not None:
            self.transformer.set_mean(in_, mean)
        if input_scale is not None:
            self.transformer.set_input_scale(in_, input_scale)
        if raw_scale is not None:
            self.transformer.set_raw_scale(in_, raw_scale)
        if channel_swap is not None:
            self.transformer.set_channel_swap(in_, channel_swap)
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
        in_ = self.inputs[0]
        caffe_in = np.array([self.transformer.preprocess(in_, crop) for crop in crops],
                            dtype=np.float32)
        predictions = self.forward_all(**{in_: caffe_in})[self.outputs[0]]
        if oversample:
            predictions = predictions.reshape((len(predictions) // 10, 10, -1)).mean(axis=1)
        return predictions
