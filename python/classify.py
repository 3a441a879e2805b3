#!/usr/bin/env python3
"""Classifies images with a trained net (caffe.Classifier) and saves the scores as a .npy file:

    classify.py INPUT OUTPUT.npy [--model_def deploy.prototxt] [--pretrained_model w.caffemodel]
                [--gpu] [--center_only] [--images_dim 256,256] [--mean_file mean.npy]
                [--mean_value 104,117,123] [--raw_scale 255] [--input_scale 1]
                [--channel_swap 2,1,0] [--ext jpg]

INPUT is an image file, a folder of images (those ending in --ext) or a .npy array of images
(N x H x W x K). OUTPUT holds an N x classes array of the net's first output, one row per image
in the order read (a folder is read in sorted order). Images are loaded as RGB in [0, 1]; the
defaults (--raw_scale 255 --channel_swap 2,1,0) suit BVLC's ImageNet models, which take BGR in
[0, 255] less the mean, and so do BVLC's other defaults: the net is CaffeNet from
models/bvlc_reference_caffenet (scripts/download_model_binary.py fetches its weights), images are
resized to 256 x 256 (or the net's input size, where larger), and the mean is
python/caffe/imagenet/ilsvrc_2012_mean.npy, or where that is absent the ImageNet mean image that
data/ilsvrc12/get_ilsvrc_aux.sh downloads. A mean file (.npy, K or K x H x W, or a .binaryproto
from compute_image_mean) is subtracted as its per-channel average, as BVLC's script does;
--mean_value gives one number per channel instead, --mean_file "" none. By default each image's
scores are the average over ten crops; --center_only uses the centre crop.
"""
import argparse
import glob
import os
import sys
import time

import _build_tree  # this folder: the scripts' helper

_build_tree.prefer_built_caffe()
import numpy as np  # noqa: E402

import caffe  # noqa: E402
from caffe.proto import caffe_pb2  # noqa: E402


def numbers(text, kind=float):
    """"1,2,3" as a list of `kind`; None for an empty or missing text."""
    return [kind(item) for item in text.split(',')] if text else None


PYTHON_DIR = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(PYTHON_DIR)
# BVLC's default mean (its notebooks np.load it too), and the mean image that
# data/ilsvrc12/get_ilsvrc_aux.sh downloads, used where the .npy is absent.
ILSVRC_MEAN_NPY = os.path.join(PYTHON_DIR, 'caffe', 'imagenet', 'ilsvrc_2012_mean.npy')
ILSVRC_MEAN_BINARYPROTO = os.path.join(REPOSITORY, 'data', 'ilsvrc12', 'imagenet_mean.binaryproto')


def load_mean(path):
    """A mean from a .npy file or a .binaryproto (BlobProto, as compute_image_mean writes it);
    a 1 x K x H x W mean loses its first axis."""
    if path.endswith('.npy'):
        mean = np.load(path)
    else:
        blob = caffe_pb2.BlobProto()
        with open(path, 'rb') as source:
            blob.ParseFromString(source.read())
        mean = caffe.io.blobproto_to_array(blob)
    if mean.ndim == 4 and mean.shape[0] == 1:
        mean = mean[0]
    return mean


def default_mean_file(script, npy=ILSVRC_MEAN_NPY, binaryproto=ILSVRC_MEAN_BINARYPROTO):
    """BVLC's default mean: the .npy if present, else the ImageNet mean image; exits with one
    line saying how to get either when neither is there."""
    for path in (npy, binaryproto):
        if os.path.exists(path):
            return path
    raise SystemExit('{}: no mean file given and the default ones are missing ({}, {}); '
                     'data/ilsvrc12/get_ilsvrc_aux.sh downloads the second, or give '
                     '--mean_file, --mean_value 104,117,123, or --mean_file "" for no '
                     'mean'.format(script, npy, binaryproto))


def load_inputs(path, ext):
    """The images named by `path`: an array from a .npy file, a folder's *.ext files (sorted),
    or one image file."""
    if path.endswith('.npy'):
        return list(np.load(path))
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, '*.' + ext)))
        if not files:
            raise SystemExit('classify.py: no *.{} files in {}'.format(ext, path))
        return [caffe.io.load_image(name) for name in files]
    return [caffe.io.load_image(path)]


def model_file(model, suffix):
    """models/<model>/<suffix>, as BVLC's scripts default to."""
    return os.path.join(REPOSITORY, 'models', model, suffix)


def add_net_arguments(parser, model):
    """The options classify.py and detect.py share: the net (by default BVLC's `model` from
    models/), the device and the preprocessing."""
    parser.add_argument('--model_def', default=model_file(model, 'deploy.prototxt'),
                        help='the deploy net (default: models/{}/deploy.prototxt)'.format(model))
    parser.add_argument('--pretrained_model', default=model_file(model, model + '.caffemodel'),
                        help='its weights (default: models/{0}/{0}.caffemodel)'.format(model))
    parser.add_argument('--gpu', action='store_true', help='run on GPU 0')
    parser.add_argument('--mean_file', default=None,
                        help='mean (.npy or .binaryproto), subtracted per channel; "" for none '
                             '(default: python/caffe/imagenet/ilsvrc_2012_mean.npy, else '
                             'data/ilsvrc12/imagenet_mean.binaryproto, unless --mean_value)')
    parser.add_argument('--mean_value', default=None, help='mean per channel, e.g. 104,117,123')
    parser.add_argument('--input_scale', type=float, default=None,
                        help='multiply the input by this after subtracting the mean')
    parser.add_argument('--raw_scale', type=float, default=255.0,
                        help='multiply the [0, 1] images by this before the mean (default 255)')
    parser.add_argument('--channel_swap', default='2,1,0',
                        help='channel order for the net (default 2,1,0: RGB -> BGR); '
                             'give "" to keep RGB')


def net_settings(args, script):
    """Sets the mode from --gpu; returns the preprocessing keywords of Classifier/Detector. A
    mean file is subtracted as its per-channel average, as BVLC's scripts do (a mean image
    rarely has the net's input size)."""
    for flag, path in (('--model_def', args.model_def),
                       ('--pretrained_model', args.pretrained_model)):
        if not os.path.exists(path):
            hint = ''
            if flag == '--pretrained_model' and path.startswith(os.path.join(REPOSITORY, 'models')):
                hint = ' (scripts/download_model_binary.py {} downloads it)'.format(
                    os.path.relpath(os.path.dirname(path), REPOSITORY))
            raise SystemExit('{}: {} {} does not exist{}'.format(script, flag, path, hint))
    if args.gpu:
        caffe.set_mode_gpu()
    else:
        caffe.set_mode_cpu()
    mean = None
    mean_file = args.mean_file
    if mean_file is None and not args.mean_value:
        mean_file = default_mean_file(script)
    if mean_file:
        mean = load_mean(mean_file)
        if mean.ndim == 3:
            mean = mean.mean(axis=(1, 2))
    elif args.mean_value:
        mean = np.array(numbers(args.mean_value))
    return dict(mean=mean, input_scale=args.input_scale, raw_scale=args.raw_scale,
                channel_swap=numbers(args.channel_swap, int))


def main(argv=None):
    parser = argparse.ArgumentParser(description='Classify images with a trained Caffe net.')
    parser.add_argument('input_file', help='an image, a folder of images, or a .npy of images')
    parser.add_argument('output_file', help='where to save the scores (.npy)')
    add_net_arguments(parser, 'bvlc_reference_caffenet')
    parser.add_argument('--center_only', action='store_true',
                        help='classify the centre crop only (default: average of ten crops)')
    parser.add_argument('--images_dim', default='256,256',
                        help='H,W the images are resized to before cropping (default 256,256, '
                             'as BVLC; a net input larger than that is used instead)')
    parser.add_argument('--ext', default='jpg', help='image extension in a folder (default jpg)')
    args = parser.parse_args(argv)

    settings = net_settings(args, 'classify.py')
    classifier = caffe.Classifier(args.model_def, args.pretrained_model,
                                  image_dims=numbers(args.images_dim, int), **settings)
    # Crops are taken inside the resized image: it may not be smaller than the net's input.
    classifier.image_dims = np.maximum(classifier.image_dims, classifier.crop_dims)
    inputs = load_inputs(os.path.expanduser(args.input_file), args.ext)
    print('Classifying {} inputs.'.format(len(inputs)))
    start = time.time()
    predictions = classifier.predict(inputs, not args.center_only)
    print('Done in {:.2f} s.'.format(time.time() - start))
    print('Saving results into {}'.format(args.output_file))
    np.save(args.output_file, predictions)
    return 0


if __name__ == '__main__':
    sys.exit(main())
