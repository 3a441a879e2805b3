"""Python layers used by the tests (python_param module 'pyloss')."""
import numpy as np

import caffe


class EuclideanLossLayer(caffe.Layer):
    """BVLC's example Python layer: loss = sum((bottom[0] - bottom[1])^2) / N / 2."""

    def setup(self, bottom, top):
        if len(bottom) != 2:
            raise Exception('EuclideanLossLayer needs two bottoms to compute a distance')

    def reshape(self, bottom, top):
        if bottom[0].count != bottom[1].count:
            raise Exception('EuclideanLossLayer: the bottoms differ in size')
        self.diff = np.zeros_like(bottom[0].data, dtype=np.float32)
        top[0].reshape(1)

    def forward(self, bottom, top):
        self.diff[...] = bottom[0].data - bottom[1].data
        top[0].data[...] = np.sum(self.diff ** 2) / bottom[0].num / 2.

    def backward(self, top, propagate_down, bottom):
        for i in range(2):
            if not propagate_down[i]:
                continue
            sign = 1 if i == 0 else -1
            bottom[i].diff[...] = sign * self.diff / bottom[i].num * top[0].diff[0]


class FailingLayer(caffe.Layer):
    """Passes its bottom through; forward raises when param_str says 'fail'."""

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].shape)

    def forward(self, bottom, top):
        if self.param_str == 'fail':
            raise ZeroDivisionError('this layer was told to fail')
        top[0].data[...] = bottom[0].data

    def backward(self, top, propagate_down, bottom):
        bottom[0].diff[...] = top[0].diff
