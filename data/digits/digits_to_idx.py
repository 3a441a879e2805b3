#!/usr/bin/env python3
"""Turns the UCI handwritten digits (sklearn's digits.csv.gz) into MNIST-format idx files.

Input: digits.csv.gz, 1797 lines of 65 comma-separated numbers: 64 pixels of an 8x8 scan in row
order, each 0..16, then the label 0..9.

Output (in --out): train-images-idx3-ubyte / train-labels-idx1-ubyte with the first 1500 digits
and t10k-images-idx3-ubyte / t10k-labels-idx1-ubyte with the last 297, file order kept.

Each 8x8 digit is upscaled to 28x28 by bilinear interpolation with half-pixel centres (the
convention of OpenCV's INTER_LINEAR and PIL's BILINEAR for upscaling): output pixel i samples the
source at x = (i + 0.5) * 8 / 28 - 0.5, clamped to [0, 7], mixing pixels floor(x) and
floor(x) + 1 (the last pixel repeats past the edge); rows and columns alike. The interpolated value
v in 0..16 becomes round-half-up(v * 255 / 16), so 0 -> 0 and 16 -> 255.

Python 3 standard library only. Files are written to temporary names and renamed when complete.
"""

import argparse
import gzip
import math
import os
import struct
import sys

SOURCE_SIZE = 8
TARGET_SIZE = 28
MAX_VALUE = 16
EXPECTED_DIGITS = 1797
TRAIN_COUNT = 1500
IMAGE_MAGIC = 2051
LABEL_MAGIC = 2049


class DigitsError(Exception):
    pass


def read_digits(csv_path):
    """Returns [(pixels (64 ints), label)] from digits.csv.gz."""
    digits = []
    try:
        with gzip.open(csv_path, "rt") as f:
            for line_number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                fields = line.split(",")
                if len(fields) != SOURCE_SIZE * SOURCE_SIZE + 1:
                    raise DigitsError("%s:%d: %d fields, expected %d"
                                      % (csv_path, line_number, len(fields),
                                         SOURCE_SIZE * SOURCE_SIZE + 1))
                values = [float(v) for v in fields]
                if any(v != int(v) or not 0 <= v <= MAX_VALUE for v in values[:-1]):
                    raise DigitsError("%s:%d: pixel values must be integers 0..%d"
                                      % (csv_path, line_number, MAX_VALUE))
                label = values[-1]
                if label != int(label) or not 0 <= label <= 9:
                    raise DigitsError("%s:%d: label %r is not a digit 0..9"
                                      % (csv_path, line_number, fields[-1]))
                digits.append(([int(v) for v in values[:-1]], int(label)))
    except (OSError, ValueError) as e:
        raise DigitsError("cannot read %s: %s" % (csv_path, e))
    if len(digits) != EXPECTED_DIGITS:
        raise DigitsError("%s holds %d digits, expected %d"
                          % (csv_path, len(digits), EXPECTED_DIGITS))
    return digits


def sample_positions():
    """Per output index: (low source index, high source index, weight of the high one)."""
    positions = []
    scale = SOURCE_SIZE / TARGET_SIZE
    for i in range(TARGET_SIZE):
        x = (i + 0.5) * scale - 0.5
        x = min(max(x, 0.0), SOURCE_SIZE - 1.0)
        low = int(math.floor(x))
        high = min(low + 1, SOURCE_SIZE - 1)
        positions.append((low, high, x - low))
    return positions


def upscale(pixels, positions):
    """8x8 values 0..16 -> 28x28 bytes 0..255 (bilinear, then scaled and rounded half up)."""
    out = bytearray(TARGET_SIZE * TARGET_SIZE)
    for r, (r0, r1, fr) in enumerate(positions):
        for c, (c0, c1, fc) in enumerate(positions):
            top = pixels[r0 * SOURCE_SIZE + c0] * (1 - fc) + pixels[r0 * SOURCE_SIZE + c1] * fc
            bottom = pixels[r1 * SOURCE_SIZE + c0] * (1 - fc) + pixels[r1 * SOURCE_SIZE + c1] * fc
            value = top * (1 - fr) + bottom * fr
            out[r * TARGET_SIZE + c] = min(255, int(math.floor(value * 255 / MAX_VALUE + 0.5)))
    return bytes(out)


def write_atomic(path, chunks):
    temporary = path + ".part"
    with open(temporary, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
    os.replace(temporary, path)


def write_split(out_dir, prefix, digits, positions):
    images = [upscale(pixels, positions) for pixels, _ in digits]
    labels = bytes(label for _, label in digits)
    write_atomic(os.path.join(out_dir, prefix + "-images-idx3-ubyte"),
                 [struct.pack(">IIII", IMAGE_MAGIC, len(digits), TARGET_SIZE, TARGET_SIZE)]
                 + images)
    write_atomic(os.path.join(out_dir, prefix + "-labels-idx1-ubyte"),
                 [struct.pack(">II", LABEL_MAGIC, len(digits)), labels])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", required=True, help="path to sklearn's digits.csv.gz")
    parser.add_argument("--out", required=True, help="folder for the idx files")
    args = parser.parse_args()
    try:
        digits = read_digits(args.csv)
        positions = sample_positions()
        write_split(args.out, "train", digits[:TRAIN_COUNT], positions)
        write_split(args.out, "t10k", digits[TRAIN_COUNT:], positions)
    except (DigitsError, OSError) as e:
        print("digits_to_idx.py: %s" % e, file=sys.stderr)
        return 1
    print("Wrote %d training and %d test digits (28x28) to %s"
          % (TRAIN_COUNT, len(digits) - TRAIN_COUNT, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
