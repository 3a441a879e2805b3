#!/usr/bin/env python3
"""Writes the two-class data of the HDF5 classification example: four features per sample, of
which two carry the class and two are noise, mixed by a random rotation so that no single column
tells the class. Class 1 lies between two clusters of class 0, so the best straight line
separates about 80 % of the samples and a small nonlinear net about 95 %.

Writes, in the output folder (default: data/ beside this script):
  train.h5, test.h5    datasets 'data' (N x 4, float32) and 'label' (N, float32); test.h5 is
                       gzip-compressed, which the HDF5Data layer reads the same
  train.txt, test.txt  the lists of HDF5 files the HDF5Data layers' `source` names (absolute
                       paths, so the nets run from any working directory)

  python3 examples/hdf5_classification/make_data.py [--out DIR] [--samples N] [--seed S]
"""
import argparse
import os
import sys

import numpy as np


def make_samples(count, seed):
    """`count` samples and their 0/1 labels."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 2, count)
    # Class 0 at (-2, 0) or (2, 0); class 1 at (0, 1), between them.
    centers = np.array([[[-2.0, 0.0], [2.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]])
    informative = centers[labels, rng.randint(0, 2, count)] + 0.6 * rng.randn(count, 2)
    features = np.hstack([informative, rng.randn(count, 2)])
    rotation, _ = np.linalg.qr(rng.randn(4, 4))
    return (features @ rotation).astype(np.float32), labels.astype(np.float32)


def write_split(folder, name, data, labels, compress):
    import h5py  # here, so that --help works without h5py
    path = os.path.join(folder, name + '.h5')
    options = dict(compression='gzip', compression_opts=1) if compress else {}
    with h5py.File(path, 'w') as out:
        out.create_dataset('data', data=data, **options)
        out.create_dataset('label', data=labels, **options)
    with open(os.path.join(folder, name + '.txt'), 'w') as listing:
        listing.write(path + '\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      'data'),
                        help='output folder (default: %(default)s)')
    parser.add_argument('--samples', type=int, default=10000,
                        help='samples in all, three quarters for training (default: %(default)s)')
    parser.add_argument('--seed', type=int, default=0, help='random seed (default: %(default)s)')
    args = parser.parse_args()
    if args.samples < 4:
        sys.exit('make_data.py: error: --samples must be at least 4, not {}'.format(args.samples))
    data, labels = make_samples(args.samples, args.seed)
    folder = os.path.abspath(args.out)
    os.makedirs(folder, exist_ok=True)
    split = args.samples * 3 // 4
    write_split(folder, 'train', data[:split], labels[:split], compress=False)
    write_split(folder, 'test', data[split:], labels[split:], compress=True)
    print('make_data.py: {} training and {} test samples in {}'.format(
        split, args.samples - split, folder))


if __name__ == '__main__':
    main()
