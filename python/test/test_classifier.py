"""caffe.Classifier and caffe.Detector on a small net with saved weights, checked against the
crops and preprocessing done by hand; classify.py and detect.py end to end."""
import argparse
import csv
import os
import subprocess
import sys

import numpy as np
import pytest

import caffe
from conftest import SOURCE_DIR, write_file
from test_io import write_ppm

# Three-channel 4 x 4 inputs, five scores.
DEPLOY = """
name: 'tiny'
layer { name: 'data' type: 'Input' top: 'data'
        input_param { shape { dim: 3 dim: 3 dim: 4 dim: 4 } } }
layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip'
        inner_product_param { num_output: 5 weight_filler { type: 'gaussian' std: 0.1 }
                              bias_filler { type: 'gaussian' std: 0.1 } } }
layer { name: 'prob' type: 'Softmax' bottom: 'ip' top: 'prob' }
"""
MEAN = np.array([100.0, 110.0, 120.0])  # per BGR channel, in [0, 255]


@pytest.fixture
def tiny_model(tmp_path):
    caffe.set_random_seed(7)
    prototxt = write_file(tmp_path / 'deploy.prototxt', DEPLOY)
    weights = str(tmp_path / 'tiny.caffemodel')
    caffe.Net(prototxt, caffe.TEST).save(weights)
    return prototxt, weights


def by_hand(prototxt, weights, crops):
    """Scores of H x W x 3 RGB crops in [0, 1], preprocessed without the Transformer."""
    net = caffe.Net(prototxt, caffe.TEST, weights=weights)
    batch = np.stack([(255.0 * crop[:, :, ::-1] - MEAN).transpose(2, 0, 1) for crop in crops])
    scores = []
    for begin in range(0, len(batch), 3):
        chunk = batch[begin:begin + 3]
        padded = np.concatenate([chunk, np.zeros((3 - len(chunk),) + chunk.shape[1:])])
        scores.append(net.forward(data=padded)['prob'][:len(chunk)].copy())
    return np.concatenate(scores)


def test_classifier_predict_centre_crop_and_oversample(tiny_model):
    prototxt, weights = tiny_model
    classifier = caffe.Classifier(prototxt, weights, image_dims=(6, 6), mean=MEAN,
                                  raw_scale=255, channel_swap=(2, 1, 0))
    assert isinstance(classifier, caffe.Net)
    rng = np.random.RandomState(3)
    images = [rng.rand(6, 6, 3).astype(np.float32) for _ in range(4)]  # already 6 x 6
    centre = classifier.predict(images, oversample=False)
    assert centre.shape == (4, 5)
    np.testing.assert_allclose(centre, by_hand(prototxt, weights,
                                               [im[1:5, 1:5] for im in images]), rtol=1e-5)
    averaged = classifier.predict(images)  # ten crops each
    for index, image in enumerate(images):
        corners = [image[y:y + 4, x:x + 4] for y, x in ((0, 0), (0, 2), (2, 0), (2, 2), (1, 1))]
        crops = corners + [crop[:, ::-1] for crop in corners]
        expected = by_hand(prototxt, weights, crops).mean(axis=0)
        np.testing.assert_allclose(averaged[index], expected, rtol=1e-5)


def test_detector_windows_and_context(tiny_model, tmp_path):
    prototxt, weights = tiny_model
    rng = np.random.RandomState(5)
    pixels = (rng.rand(8, 10, 3) * 255).astype(np.uint8)
    path = write_ppm(tmp_path / 'scene.ppm', pixels)
    image = pixels / np.float32(255)
    detector = caffe.Detector(prototxt, weights, mean=MEAN, raw_scale=255,
                              channel_swap=(2, 1, 0))
    windows = np.array([[0, 0, 4, 4], [2, 3, 6, 7], [0, 0, 8, 10]])
    detections = detector.detect_windows([(path, windows)])
    assert [d['filename'] for d in detections] == [path] * 3
    crops = [image[0:4, 0:4], image[2:6, 3:7], caffe.io.resize_image(image, (4, 4))]
    expected = by_hand(prototxt, weights, crops)
    for detection, window, scores in zip(detections, windows, expected):
        np.testing.assert_array_equal(detection['window'], window)
        np.testing.assert_allclose(detection['prediction'], scores, rtol=1e-5)
    # With context (R-CNN): the window fills the 4 x 4 crop less 1 pixel of padding on each
    # side, so the crop shows the window grown about its centre to twice its size.
    padded = caffe.Detector(prototxt, weights, mean=MEAN, raw_scale=255,
                            channel_swap=(2, 1, 0), context_pad=1)
    crop = padded.crop(image, [2, 3, 6, 7])
    np.testing.assert_allclose(crop, caffe.io.resize_image(image[0:8, 1:9], (4, 4)), atol=1e-6)
    # Where the padded window leaves the image, the crop holds the mean (in image space).
    corner = padded.crop(image, [0, 0, 4, 4])
    np.testing.assert_allclose(corner[0, 0], MEAN[::-1] / 255.0, rtol=1e-6)


def run_script(name, *args, expect_status=0):
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    result = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, 'python', name)] +
                            list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=environment, check=False)
    output = result.stdout.decode('utf-8', 'replace')
    assert result.returncode == expect_status, output
    return output


def test_classify_script_saves_the_classifier_scores(tiny_model, tmp_path):
    prototxt, weights = tiny_model
    images = np.random.RandomState(9).rand(5, 6, 6, 3).astype(np.float32)
    np.save(str(tmp_path / 'images.npy'), images)
    output = str(tmp_path / 'scores.npy')
    log = run_script('classify.py', str(tmp_path / 'images.npy'), output,
                     '--model_def', prototxt, '--pretrained_model', weights,
                     '--mean_value', '100,110,120', '--images_dim', '6,6', '--center_only')
    assert 'Classifying 5 inputs.' in log
    classifier = caffe.Classifier(prototxt, weights, image_dims=(6, 6), mean=MEAN,
                                  raw_scale=255, channel_swap=(2, 1, 0))
    np.testing.assert_allclose(np.load(output), classifier.predict(list(images), False),
                               rtol=1e-5)


def test_detect_script_writes_scores_per_window(tiny_model, tmp_path):
    prototxt, weights = tiny_model
    path = write_ppm(tmp_path / 'scene.ppm', np.full((8, 8, 3), 200, np.uint8))
    windows = write_file(tmp_path / 'windows.csv',
                         'filename,ymin,xmin,ymax,xmax\n{0},0,0,4,4\n{0},2,2,8,8\n'.format(path))
    output = str(tmp_path / 'detections.csv')
    run_script('detect.py', windows, output, '--model_def', prototxt, '--pretrained_model',
               weights, '--mean_value', '100,110,120', '--context_pad', '0')
    with open(output) as table:
        rows = list(csv.reader(table))
    assert rows[0] == ['filename', 'ymin', 'xmin', 'ymax', 'xmax'] + \
        ['class{}'.format(i) for i in range(5)]
    assert [row[:5] for row in rows[1:]] == [[path, '0', '0', '4', '4'], [path, '2', '2', '8', '8']]
    scores = by_hand(prototxt, weights, [np.full((4, 4, 3), 200 / 255.0)] * 2)
    np.testing.assert_allclose(np.array([row[5:] for row in rows[1:]], float), scores, rtol=1e-5)


def import_script(name):
    """python/<name>.py as a module (its functions and argument parser)."""
    sys.path.insert(0, os.path.join(SOURCE_DIR, 'python'))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_scripts_default_to_bvlcs_models_and_mean(tmp_path):
    classify = import_script('classify')
    models = os.path.join(SOURCE_DIR, 'models')
    for script, model in (('classify', 'bvlc_reference_caffenet'),
                          ('detect', 'bvlc_reference_rcnn_ilsvrc13')):
        parser = argparse.ArgumentParser()
        classify.add_net_arguments(parser, model)
        args = parser.parse_args([])
        assert args.model_def == os.path.join(models, model, 'deploy.prototxt')
        assert args.pretrained_model == os.path.join(models, model, model + '.caffemodel')
        assert os.path.exists(args.model_def), script
    # The mean: BVLC's .npy where present, else the ImageNet mean image, else one line on how
    # to get one.
    npy, binaryproto = str(tmp_path / 'mean.npy'), str(tmp_path / 'mean.binaryproto')
    with pytest.raises(SystemExit, match='classify.py: no mean file given .*get_ilsvrc_aux.sh'):
        classify.default_mean_file('classify.py', npy, binaryproto)
    write_file(binaryproto, '')
    assert classify.default_mean_file('classify.py', npy, binaryproto) == binaryproto
    write_file(npy, '')
    assert classify.default_mean_file('classify.py', npy, binaryproto) == npy


def test_missing_default_weights_say_how_to_download_them(tmp_path):
    weights = os.path.join(SOURCE_DIR, 'models', 'bvlc_reference_caffenet',
                           'bvlc_reference_caffenet.caffemodel')
    if os.path.exists(weights):
        pytest.skip('CaffeNet\'s weights are downloaded in this checkout')
    output = run_script('classify.py', str(tmp_path / 'cat.jpg'), str(tmp_path / 'out.npy'),
                        expect_status=1)
    assert output.strip() == ('classify.py: --pretrained_model {} does not exist '
                              '(scripts/download_model_binary.py models/bvlc_reference_caffenet '
                              'downloads it)'.format(weights)), output


def test_a_mean_image_is_subtracted_per_channel(tiny_model, tmp_path):
    # A 3 x 8 x 8 mean image whose channels average MEAN, and images smaller than the net's
    # 4 x 4 input: resized to the input size, as the scores by hand show.
    prototxt, weights = tiny_model
    pattern = np.random.RandomState(3).rand(8, 8)
    mean_image = MEAN[:, np.newaxis, np.newaxis] + 10 * (pattern - pattern.mean())
    np.save(str(tmp_path / 'mean.npy'), mean_image)
    images = np.random.RandomState(4).rand(2, 4, 4, 3).astype(np.float32)
    np.save(str(tmp_path / 'images.npy'), images)
    output = str(tmp_path / 'scores.npy')
    run_script('classify.py', str(tmp_path / 'images.npy'), output, '--model_def', prototxt,
               '--pretrained_model', weights, '--mean_file', str(tmp_path / 'mean.npy'),
               '--images_dim', '2,2', '--center_only')
    np.testing.assert_allclose(np.load(output), by_hand(prototxt, weights, list(images)),
                               rtol=1e-5)
