"""Detector: a Net that classifies windows of images (R-CNN style): each window is cropped,
optionally with context padding, warped to the net's input size and classified."""
import numpy as np

from . import io
from .classifier import classify_images, load_image_net
from .pycaffe import Net


class Detector(Net):
    """A TEST-phase net with a Transformer for its first input (mean, input_scale, raw_scale,
    channel_swap as caffe.io.Transformer takes them). context_pad: pixels of context around each
    window in the warped crop (R-CNN uses 16); the part of the padded window outside the image is
    filled with the mean."""

    def __init__(self, model_file, pretrained_file, mean=None, input_scale=None,
                 raw_scale=None, channel_swap=None, context_pad=None):
        load_image_net(self, model_file, pretrained_file, mean, input_scale, raw_scale,
                       channel_swap)
        self.configure_crop(context_pad)

    def configure_crop(self, context_pad):
        """Sets the context padding, and the image-space mean used to fill outside the image."""
        in_ = self.inputs[0]
        channels, height, width = self.blobs[in_].data.shape[1:]
        self.crop_dims = np.array((height, width, channels))
        self.context_pad = context_pad or 0
        # The image whose preprocessing is all zeros: the mean, in image space.
        crop_mean = self.transformer.deprocess(in_, np.zeros((channels, height, width)))
        self.crop_mean = crop_mean.reshape(tuple(self.crop_dims)).astype(np.float32)

    def crop(self, im, window):
        """The window (ymin, xmin, ymax, xmax) of image `im` (H x W x K), with context padding,
        warped to the net's input size (H x W x K)."""
        window = np.asarray(window, dtype=np.float64)
        if not self.context_pad:
            y0, x0, y1, x1 = window.astype(int)
            return io.resize_image(im[y0:y1, x0:x1], self.crop_dims[:2])
        size = self.crop_dims[:2].astype(np.float64)
        # Grow the window about its centre so that it fills the crop less the padding.
        centre = np.array([(window[0] + window[2]) / 2.0, (window[1] + window[3]) / 2.0])
        half = np.array([window[2] - window[0], window[3] - window[1]]) / 2.0
        half *= size / (size - 2.0 * self.context_pad)
        box_min, box_max = centre - half, centre + half
        scale = size / (box_max - box_min)
        image_size = np.array(im.shape[:2], dtype=np.float64)
        clip_min = np.clip(box_min, 0, image_size)
        clip_max = np.clip(box_max, 0, image_size)
        out_min = np.round((clip_min - box_min) * scale).astype(int)
        out_max = np.minimum(np.round((clip_max - box_min) * scale).astype(int),
                             self.crop_dims[:2])
        result = self.crop_mean.copy()
        if np.all(out_max > out_min) and np.all(clip_max - clip_min >= 1):
            source = im[int(clip_min[0]):int(np.ceil(clip_max[0])),
                        int(clip_min[1]):int(np.ceil(clip_max[1]))]
            result[out_min[0]:out_max[0], out_min[1]:out_max[1]] = io.resize_image(
                source, out_max - out_min).reshape(
                    (out_max[0] - out_min[0], out_max[1] - out_min[1], -1))
        return result

    def detect_windows(self, images_windows):
        """Classifies windows: images_windows is a list of (image file, windows), windows an
        array of rows (ymin, xmin, ymax, xmax). Returns a list of dicts with 'window',
        'prediction' (the first output's scores) and 'filename', one per window."""
        crops = []
        for filename, windows in images_windows:
            image = io.load_image(filename).astype(np.float32)
            crops.extend(self.crop(image, window) for window in windows)
        if not crops:
            return []
        predictions = classify_images(self, crops)
        detections = []
        for filename, windows in images_windows:
            for window in windows:
                detections.append({'window': window, 'prediction': predictions[len(detections)],
                                   'filename': filename})
        return detections

    def detect_selective_search(self, image_fnames):
        """detect_windows over the windows that the selective_search_ijcv_with_python package
        (R-CNN's MATLAB selective search, installed separately) proposes for each image."""
        try:
            import selective_search_ijcv_with_python as selective_search
        except ImportError:
            raise ImportError('detect_selective_search needs the selective_search_ijcv_with_python '
                              'package (github.com/sergeyk/selective_search_ijcv_with_python) and '
                              'MATLAB; or pass your own windows to detect_windows') from None
        image_fnames = [str(name) for name in image_fnames]
        windows_list = selective_search.get_windows(image_fnames, cmd='selective_search_rcnn')
        return self.detect_windows(list(zip(image_fnames, windows_list)))
