"""A loss written in Python: BVLC's example of a Python layer (examples/pycaffe/linreg.prototxt
uses it as python_param { module: 'pyloss' layer: 'EuclideanLossLayer' }, with this folder on
PYTHONPATH)."""
import numpy as np

import caffe


class EuclideanLossLayer(caffe.Layer):
    """The Euclidean loss of Caffe's EuclideanLoss layer, in Python:
    loss = sum((bottom[0] - bottom[1])^2) / N / 2, N the bottoms' first dimension."""

    def setup(self, bottom, top):
        if len(bottom) != 2:
            raise Exception('EuclideanLossLayer needs two bottoms to compute a distance')

    def reshape(self, bottom, top):
        if bottom[0].count != bottom[1].count:
            raise Exception('EuclideanLossLayer: the bottoms differ in size')
        self.diff = np.zeros_like(bottom[0].data, dtype=np.float32)
        top[0].reshape(1)  # the loss is a scalar

    def forward(self, bottom, top):
        self.diff[...] = bottom[0].data - bottom[1].data
        top[0].data[...] = np.sum(self.diff ** 2) / bottom[0].num / 2.

    def backward(self, top, propagate_down, bottom):
        for i in range(2):
            if not propagate_down[i]:
                continue
            sign = 1 if i == 0 else -1
            bottom[i].diff[...] = sign * self.diff / bottom[i].num * top[0].diff[0]
