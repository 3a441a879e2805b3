"""A deploy prototxt's learnable parameters (gradient bytes, in backward order) and multiply-adds
per sample, for the DDL cost model (scaling_model.py). Standard library only: a small reader of
the prototxt text format, enough for the layers of models/resnet50 and models/unet3d."""

import math
import re


def _tokens(text):
    text = re.sub(r"#[^\n]*", "", text)
    return re.findall(r'"[^"]*"|[{}:]|[^\s{}:"]+', text)


def parse_prototxt(text):
    """A nested {field: [values]} of protobuf text format."""
    tokens = _tokens(text)
    pos = 0

    def message():
        nonlocal pos
        out = {}
        while pos < len(tokens) and tokens[pos] != "}":
            name = tokens[pos]
            pos += 1
            if tokens[pos] == ":":
                pos += 1
            if tokens[pos] == "{":
                pos += 1
                value = message()
                pos += 1
            else:
                value = tokens[pos].strip('"')
                pos += 1
            out.setdefault(name, []).append(value)
        return out

    return message()


def _one(msg, name, default):
    return msg.get(name, [default])[0]


def _spatial(msg, name, count, default):
    values = [int(v) for v in msg.get(name, [])]
    if not values:
        return [default] * count
    return values * count if len(values) == 1 else values


def net_layers(path, net=None):
    """[(layer name, learnable parameters, multiply-adds per sample)] in forward order, of the
    net in path (a net, or a solver with net_param) or of an already parsed net."""
    if net is None:
        with open(path) as f:
            net = parse_prototxt(f.read())
        if "net_param" in net:
            net = net["net_param"][0]
    shapes = {}
    layers = []
    batch = 1
    for layer in net.get("layer", []):
        kind = _one(layer, "type", "")
        bottoms, tops = layer.get("bottom", []), layer.get("top", [])
        params, macs = 0, 0
        if kind in ("Input", "DummyData"):
            param = layer["input_param" if kind == "Input" else "dummy_data_param"][0]
            for top, shape in zip(tops, param["shape"]):
                dims = [int(d) for d in shape["dim"]]
                batch = dims[0]
                shapes[top] = (dims[1] if len(dims) > 1 else 1, dims[2:])
            continue
        if not bottoms or bottoms[0] not in shapes:
            continue
        channels, spatial = shapes[bottoms[0]]
        out = (channels, spatial)
        if kind in ("Convolution", "Deconvolution"):
            p = layer["convolution_param"][0]
            num = int(_one(p, "num_output", 0))
            group = int(_one(p, "group", 1))
            k = _spatial(p, "kernel_size", len(spatial), 1)
            pad = _spatial(p, "pad", len(spatial), 0)
            stride = _spatial(p, "stride", len(spatial), 1)
            bias = _one(p, "bias_term", "true") == "true"
            weights = num * channels // group * math.prod(k)
            params = weights + (num if bias else 0)
            if kind == "Convolution":
                size = [(i + 2 * q - kk) // s + 1 for i, q, kk, s in zip(spatial, pad, k, stride)]
                macs = weights * math.prod(size)
            else:
                size = [s * (i - 1) + kk - 2 * q for i, q, kk, s in zip(spatial, pad, k, stride)]
                macs = weights * math.prod(spatial)
            out = (num, size)
        elif kind == "InnerProduct":
            p = layer["inner_product_param"][0]
            num = int(_one(p, "num_output", 0))
            inputs = channels * math.prod(spatial)
            bias = _one(p, "bias_term", "true") == "true"
            params = num * inputs + (num if bias else 0)
            macs = num * inputs
            out = (num, [])
        elif kind == "Pooling":
            p = layer.get("pooling_param", [{}])[0]
            if _one(p, "global_pooling", "false") == "true":
                size = [1] * len(spatial)
            else:
                k = _spatial(p, "kernel_size", len(spatial), 1)
                pad = _spatial(p, "pad", len(spatial), 0)
                stride = _spatial(p, "stride", len(spatial), 1)
                size = []
                for i, q, kk, s in zip(spatial, pad, k, stride):
                    o = -(-(i + 2 * q - kk) // s) + 1
                    if q and (o - 1) * s >= i + q:
                        o -= 1
                    size.append(o)
            out = (channels, size)
        elif kind == "BatchNorm":
            params = 2 * channels + 1  # mean, variance, moving-average factor
        elif kind == "Scale":
            p = layer.get("scale_param", [{}])[0]
            params = channels * (2 if _one(p, "bias_term", "false") == "true" else 1)
        elif kind == "Concat":
            out = (sum(shapes[b][0] for b in bottoms), spatial)
        elif kind == "Crop":
            out = (channels, shapes[bottoms[1]][1])
        for top in tops:
            shapes[top] = out
        layers.append((_one(layer, "name", kind), params, macs))
    del batch  # the shapes are per sample: spatial sizes do not depend on the batch
    return layers
