"""A Python layer for the error tests (python_param module 'failing_layer')."""
import caffe


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
