#!/usr/bin/env python3
"""Builds the graph of a Caffe prototxt in PyTorch and times it, for benchmarks/cpu.sh.

The net is read with the protobuf module (caffe_pb2 generated from src/caffe/proto/caffe.proto)
and run layer by layer in the prototxt's order, with random weights, so PyTorch executes the same
graph at the same batch as `caffe time`. Two commands:

  time --proto-dir DIR --model NET --phase TRAIN|TEST [--iterations I] [--threads T]
       [--caffe-log LOG] [--device cpu|cuda]
      TRAIN times the training step (zero_grad + forward + loss.backward(), no optimizer step, as
      `caffe time` does not update either); TEST times the inference forward (eval, no_grad).
      With --caffe-log (the log of `caffe time` on the same net and phase) it first checks that
      every layer's top shapes equal Caffe's "Top shape" lines, and in TRAIN it turns Caffe's
      per-layer times into the GFLOP/s of its convolution layers. Prints `key value` lines.
      --device cuda runs it on the GPU in fp32 as `caffe time -gpu 0` does: TF32 off (Caffe's
      cuDNN paths keep float in FMA math), cuDNN's autotuner on (PyTorch's fastest fp32 setting),
      and the GPU waited for around each timed pass.
  input-net --proto-dir DIR --model NET --shape N,C,H,W
      Prints NET with its Data layers replaced by one Input layer: the first top gets the shape,
      the second (the label) gets (N).

Translation notes: BatchNorm followed by a Scale on its output becomes one affine batch_norm (how
a PyTorch user writes it); ReLU runs in place where the prototxt says so; Dropout and BatchNorm
follow Caffe's phase rules (BatchNorm's use_global_stats defaults to the TEST phase), so
model.eval() is not what switches them. Labels are random integers below the class count of
the loss layer.
"""
import argparse
import math
import re
import sys
import time

# Shapes in comments: N batch, C channels, H/W spatial, K flattened inner size.
LOSS_TYPES = {"SoftmaxWithLoss"}
LABEL_CONSUMERS = {"SoftmaxWithLoss": 1, "Accuracy": 1}
SUPPORTED = ("Input, DummyData, Convolution, Pooling, ReLU, LRN, InnerProduct, Dropout, Concat, "
             "Split, Silence, Softmax, SoftmaxWithLoss, Accuracy, BatchNorm, Scale, Eltwise, "
             "Flatten, Reshape")


def fail(message):
    print("error: " + message, file=sys.stderr)
    sys.exit(1)


def load_pb2(proto_dir):
    sys.path.insert(0, proto_dir)
    import caffe_pb2  # noqa: E402 (generated at run time)
    return caffe_pb2


def read_net(pb2, path):
    from google.protobuf import text_format
    net = pb2.NetParameter()
    with open(path) as f:
        text_format.Merge(f.read(), net)
    if net.layers:
        fail(f"{path}: V1 'layers' are not supported; upgrade the net to 'layer'")
    return net


def state_meets_rule(rule, phase):
    # The benchmark nets run at level 0 with no stages, as `caffe time` does by default.
    if rule.HasField("phase") and rule.phase != phase:
        return False
    if rule.HasField("min_level") and rule.min_level > 0:
        return False
    if rule.HasField("max_level") and rule.max_level < 0:
        return False
    return len(rule.stage) == 0


def included(layer, phase):
    if layer.include:
        return any(state_meets_rule(rule, phase) for rule in layer.include)
    return not any(state_meets_rule(rule, phase) for rule in layer.exclude)


def spatial(values, value_h, value_w, has_hw, default, name, what):
    """Caffe's 2-D parameter rule: *_h/*_w, or one value (or one per axis), or the default."""
    if has_hw:
        return (value_h, value_w)
    values = list(values) if not isinstance(values, int) else [values]
    if not values:
        if default is None:
            fail(f"layer '{name}': {what} is not set")
        return (default, default)
    if len(values) == 1:
        return (values[0], values[0])
    if len(values) == 2:
        return tuple(values)
    fail(f"layer '{name}': {len(values)} values of {what}; only 2-D is supported")


class Step:
    """One Caffe layer: `run(bottoms) -> tops` plus what the timing and checks need."""

    def __init__(self, param, run, bottoms, tops, loss_weights):
        self.param, self.run, self.bottoms, self.tops = param, run, bottoms, tops
        self.loss_weights = loss_weights


class CaffeGraph:
    """The prototxt's layers for one phase, with PyTorch modules for the learned ones."""

    def __init__(self, torch, pb2, net_param, phase_name):
        import torch.nn.functional as F
        self.torch, self.F, self.pb2 = torch, F, pb2
        self.phase = pb2.TRAIN if phase_name == "TRAIN" else pb2.TEST
        self.modules = torch.nn.ModuleList()
        self.inputs = {}       # blob name -> tensor made by Input / DummyData
        self.steps = []
        self.shapes = []       # (layer name, [top shapes]) in Caffe's order
        self.convs = []        # (layer name, forward FLOPs, bottom needs gradient)
        self.inplace_relu = True
        layers = [lp for lp in net_param.layer if included(lp, self.phase)]
        self.label_blobs = {lp.bottom[LABEL_CONSUMERS[lp.type]] for lp in layers
                            if lp.type in LABEL_CONSUMERS and len(lp.bottom) > 1}
        self.bottom_uses = {}
        for lp in layers:
            for b in lp.bottom:
                self.bottom_uses[b] = self.bottom_uses.get(b, 0) + 1
        if net_param.input:
            fail("net-level 'input' fields are not supported; use an Input layer")
        blobs, producer = {}, {}
        # The build pass runs every layer once, with gradients on, to learn shapes and which
        # convolutions must propagate a gradient to their input.
        for index, lp in enumerate(layers):
            for b in lp.bottom:
                if b not in blobs:
                    fail(f"layer '{lp.name}' ({lp.type}): unknown bottom blob '{b}'")
            build = getattr(self, "build_" + lp.type, None)
            if build is None:
                fail(f"layer '{lp.name}': unsupported layer type \"{lp.type}\"; "
                     f"supported: {SUPPORTED}")
            run = build(lp, [blobs[b] for b in lp.bottom], producer)
            weights = list(lp.loss_weight)
            if not weights:
                weights = [1.0 if lp.type in LOSS_TYPES else 0.0] + [0.0] * (len(lp.top) - 1)
            step = Step(lp, run, list(lp.bottom), list(lp.top), weights)
            tops = run([blobs[b] for b in lp.bottom])
            if len(tops) != len(lp.top):
                fail(f"layer '{lp.name}': made {len(tops)} tops, the prototxt names {len(lp.top)}")
            for name, tensor in zip(lp.top, tops):
                blobs[name] = tensor
                producer[name] = index
            self.steps.append(step)
            self.shapes.append((lp.name, [tuple(t.shape) for t in tops]))

    # --- helpers ---------------------------------------------------------------------------
    def add(self, module):
        self.modules.append(module)
        return module

    def label_tensor(self, label, logits, axis, name):
        # Caffe labels are (N), (N, 1) or (N, 1, H, W); PyTorch wants the logits' shape without C.
        target = list(logits.shape[:axis]) + list(logits.shape[axis + 1:])
        if label.numel() != math.prod(target):
            fail(f"layer '{name}': {label.numel()} labels for logits {tuple(logits.shape)}")
        return label.reshape(target)

    def fill_labels(self, lp, logits, axis):
        label_name = lp.bottom[1]
        if label_name in self.inputs:
            self.inputs[label_name].random_(0, logits.shape[axis])

    # --- data ------------------------------------------------------------------------------
    def make_inputs(self, lp, shapes):
        torch = self.torch
        tensors = []
        for top, shape in zip(lp.top, shapes):
            if top in self.label_blobs:
                tensor = torch.zeros(shape, dtype=torch.long)
            else:
                tensor = torch.randn(shape)
            self.inputs[top] = tensor
            tensors.append(tensor)
        names = list(lp.top)
        return lambda bottoms: [self.inputs[n] for n in names]

    def build_Input(self, lp, bottoms, producer):
        shapes = [tuple(s.dim) for s in lp.input_param.shape]
        if len(shapes) == 1:
            shapes = shapes * len(lp.top)
        if len(shapes) != len(lp.top):
            fail(f"layer '{lp.name}': {len(shapes)} shapes for {len(lp.top)} tops")
        return self.make_inputs(lp, shapes)

    def build_DummyData(self, lp, bottoms, producer):
        p = lp.dummy_data_param
        shapes = [tuple(s.dim) for s in p.shape]
        if not shapes:
            shapes = [(n, c, h, w) for n, c, h, w in zip(p.num, p.channels, p.height, p.width)]
        if len(shapes) == 1:
            shapes = shapes * len(lp.top)
        return self.make_inputs(lp, shapes)

    # --- learned layers --------------------------------------------------------------------
    def build_Convolution(self, lp, bottoms, producer):
        p = lp.convolution_param
        x = bottoms[0]
        if x.dim() != 4:
            fail(f"layer '{lp.name}': bottom {tuple(x.shape)}; only 2-D convolution is supported")
        kernel = spatial(p.kernel_size, p.kernel_h, p.kernel_w, p.HasField("kernel_h"), None,
                         lp.name, "kernel_size")
        stride = spatial(p.stride, p.stride_h, p.stride_w, p.HasField("stride_h"), 1, lp.name,
                         "stride")
        pad = spatial(p.pad, p.pad_h, p.pad_w, p.HasField("pad_h"), 0, lp.name, "pad")
        dilation = spatial(p.dilation, 0, 0, False, 1, lp.name, "dilation")
        channels = x.shape[1]
        if channels % p.group or p.num_output % p.group:
            fail(f"layer '{lp.name}': group {p.group} does not divide {channels} inputs and "
                 f"{p.num_output} outputs")
        conv = self.add(self.torch.nn.Conv2d(channels, p.num_output, kernel, stride, pad,
                                             dilation, p.group, p.bias_term))
        out = [(x.shape[2 + i] + 2 * pad[i] - (dilation[i] * (kernel[i] - 1) + 1)) // stride[i] + 1
               for i in range(2)]
        flops = 2 * x.shape[0] * p.num_output * out[0] * out[1] * (channels // p.group) \
            * kernel[0] * kernel[1]
        self.convs.append((lp.name, flops, x.requires_grad))
        return lambda bottoms: [conv(bottoms[0])]

    def build_InnerProduct(self, lp, bottoms, producer):
        p = lp.inner_product_param
        axis = p.axis % bottoms[0].dim()
        inner = math.prod(bottoms[0].shape[axis:])
        linear = self.add(self.torch.nn.Linear(inner, p.num_output, bias=p.bias_term))
        return lambda bottoms: [linear(bottoms[0].flatten(axis))]

    def build_BatchNorm(self, lp, bottoms, producer):
        torch = self.torch
        p = lp.batch_norm_param
        use_global = p.use_global_stats if p.HasField("use_global_stats") \
            else self.phase == self.pb2.TEST
        channels = bottoms[0].shape[1]
        norm = self.add(torch.nn.Module())
        norm.register_buffer("mean", torch.zeros(channels))
        norm.register_buffer("var", torch.ones(channels))
        norm.weight = norm.bias = None   # set when a Scale layer is folded in
        norm.folded = False
        momentum = 1.0 - p.moving_average_fraction
        F = self.F
        self.last_norm = (norm, lp)
        return lambda bottoms: [F.batch_norm(bottoms[0], norm.mean, norm.var, norm.weight,
                                             norm.bias, not use_global, momentum, p.eps)]

    def build_Scale(self, lp, bottoms, producer):
        torch = self.torch
        p = lp.scale_param
        if len(lp.bottom) != 1:
            fail(f"layer '{lp.name}': Scale with a second bottom is not supported")
        axis = p.axis % bottoms[0].dim()
        num_axes = bottoms[0].dim() - axis if p.num_axes == -1 else p.num_axes
        shape = tuple(bottoms[0].shape[axis:axis + num_axes])
        previous = self.steps[-1].param if self.steps else None
        norm = getattr(self, "last_norm", (None, None))
        fold = (previous is not None and previous.type == "BatchNorm" and norm[1] is previous
                and lp.bottom[0] == previous.top[0] and axis == 1 and num_axes == 1
                and (lp.top[0] == lp.bottom[0] or self.bottom_uses.get(lp.bottom[0], 0) == 1))
        weight = torch.nn.Parameter(torch.ones(shape))
        bias = torch.nn.Parameter(torch.zeros(shape)) if p.bias_term else None
        if fold:
            norm[0].weight, norm[0].bias = weight, bias
            return lambda bottoms: [bottoms[0]]
        holder = self.add(torch.nn.Module())
        holder.weight, holder.bias = weight, bias
        view = (1,) * axis + shape + (1,) * (bottoms[0].dim() - axis - num_axes)

        def run(bottoms):
            y = bottoms[0] * holder.weight.view(view)
            return [y + holder.bias.view(view) if holder.bias is not None else y]
        return run

    # --- element-wise and structural layers --------------------------------------------------
    def build_ReLU(self, lp, bottoms, producer):
        F = self.F
        slope = lp.relu_param.negative_slope
        inplace = lp.top[0] == lp.bottom[0]

        def run(bottoms):
            use_inplace = inplace and self.inplace_relu
            if slope != 0:
                return [F.leaky_relu(bottoms[0], slope, inplace=use_inplace)]
            return [F.relu(bottoms[0], inplace=use_inplace)]
        return run

    def build_Dropout(self, lp, bottoms, producer):
        F = self.F
        ratio = lp.dropout_param.dropout_ratio
        train = self.phase == self.pb2.TRAIN
        return lambda bottoms: [F.dropout(bottoms[0], ratio, train)]

    def build_Pooling(self, lp, bottoms, producer):
        F = self.F
        p = lp.pooling_param
        x = bottoms[0]
        if x.dim() != 4:
            fail(f"layer '{lp.name}': bottom {tuple(x.shape)}; only 2-D pooling is supported")
        if p.global_pooling:
            kernel, stride, pad = tuple(x.shape[2:]), (1, 1), (0, 0)
        else:
            kernel = spatial(p.kernel_size if p.HasField("kernel_size") else [], p.kernel_h,
                             p.kernel_w, p.HasField("kernel_h"), None, lp.name, "kernel_size")
            stride = spatial(p.stride, p.stride_h, p.stride_w, p.HasField("stride_h"), 1,
                             lp.name, "stride")
            pad = spatial(p.pad, p.pad_h, p.pad_w, p.HasField("pad_h"), 0, lp.name, "pad")
        ceil = p.round_mode == p.CEIL and not (p.HasField("ceil_mode") and not p.ceil_mode)
        if len(lp.top) != 1:
            fail(f"layer '{lp.name}': Pooling with a mask top is not supported")
        if p.pool == p.MAX:
            return lambda bottoms: [F.max_pool2d(bottoms[0], kernel, stride, pad, ceil_mode=ceil)]
        if p.pool == p.AVE:
            # Caffe divides by the window clipped to the padded input, as count_include_pad does.
            return lambda bottoms: [F.avg_pool2d(bottoms[0], kernel, stride, pad, ceil_mode=ceil,
                                                 count_include_pad=True)]
        fail(f"layer '{lp.name}': STOCHASTIC pooling is not supported")

    def build_LRN(self, lp, bottoms, producer):
        F = self.F
        p = lp.lrn_param
        if p.local_size % 2 == 0:
            fail(f"layer '{lp.name}': local_size {p.local_size} must be odd (Caffe's rule)")
        if p.norm_region == p.ACROSS_CHANNELS:
            # PyTorch averages the squares over the window, i.e. alpha / local_size, as Caffe does.
            return lambda bottoms: [F.local_response_norm(bottoms[0], p.local_size, p.alpha,
                                                          p.beta, p.k)]
        half = (p.local_size - 1) // 2

        def within(bottoms):
            x = bottoms[0]
            mean_square = F.avg_pool2d(x * x, p.local_size, 1, half, count_include_pad=True)
            return [x * (1 + p.alpha * mean_square).pow(-p.beta)]
        return within

    def build_Concat(self, lp, bottoms, producer):
        p = lp.concat_param
        axis = p.axis if p.HasField("axis") or not p.HasField("concat_dim") else p.concat_dim
        cat = self.torch.cat
        return lambda bottoms: [cat(bottoms, axis)]

    def build_Split(self, lp, bottoms, producer):
        count = len(lp.top)
        return lambda bottoms: [bottoms[0]] * count

    def build_Silence(self, lp, bottoms, producer):
        return lambda bottoms: []

    def build_Eltwise(self, lp, bottoms, producer):
        torch = self.torch
        p = lp.eltwise_param
        coeffs = list(p.coeff) or [1.0] * len(lp.bottom)
        if p.operation == p.SUM:
            if all(c == 1.0 for c in coeffs):
                def add(bottoms):
                    y = bottoms[0] + bottoms[1]
                    for b in bottoms[2:]:
                        y = y + b
                    return [y]
                return add
            return lambda bottoms: [sum(c * b for c, b in zip(coeffs, bottoms))]
        if p.operation == p.PROD:
            return lambda bottoms: [math.prod(bottoms[1:], start=bottoms[0])]

        def maximum(bottoms):
            y = bottoms[0]
            for b in bottoms[1:]:
                y = torch.maximum(y, b)
            return [y]
        return maximum

    def build_Flatten(self, lp, bottoms, producer):
        p = lp.flatten_param
        return lambda bottoms: [bottoms[0].flatten(p.axis, p.end_axis)]

    def build_Reshape(self, lp, bottoms, producer):
        p = lp.reshape_param
        dims = list(p.shape.dim)

        def run(bottoms):
            x = bottoms[0]
            start = p.axis % (x.dim() + 1)
            end = x.dim() if p.num_axes == -1 else start + p.num_axes
            middle = [x.shape[start + i] if d == 0 else d for i, d in enumerate(dims)]
            return [x.reshape(list(x.shape[:start]) + middle + list(x.shape[end:]))]
        return run

    def build_Softmax(self, lp, bottoms, producer):
        F = self.F
        axis = lp.softmax_param.axis
        return lambda bottoms: [F.softmax(bottoms[0], axis)]

    def build_SoftmaxWithLoss(self, lp, bottoms, producer):
        F = self.F
        axis = lp.softmax_param.axis % bottoms[0].dim()
        if axis != 1:
            fail(f"layer '{lp.name}': softmax axis {axis}; only 1 is supported")
        self.fill_labels(lp, bottoms[0], axis)
        p = lp.loss_param
        ignore = p.ignore_label if p.HasField("ignore_label") else -100
        mode = p.normalization
        if p.HasField("normalize") and not p.HasField("normalization"):
            mode = p.VALID if p.normalize else p.BATCH_SIZE
        reduction = "mean" if mode in (p.VALID, p.FULL) else "sum"
        scale = 1.0 / bottoms[0].shape[0] if mode == p.BATCH_SIZE else 1.0
        name = lp.name

        def run(bottoms):
            label = self.label_tensor(bottoms[1], bottoms[0], 1, name)
            loss = F.cross_entropy(bottoms[0], label, ignore_index=ignore, reduction=reduction)
            return [loss * scale if scale != 1.0 else loss]
        return run

    def build_Accuracy(self, lp, bottoms, producer):
        torch = self.torch
        p = lp.accuracy_param
        axis = p.axis % bottoms[0].dim()
        self.fill_labels(lp, bottoms[0], axis)
        name = lp.name

        def run(bottoms):
            with torch.no_grad():
                logits = bottoms[0].movedim(axis, -1)
                label = self.label_tensor(bottoms[1], bottoms[0], axis, name)
                top = logits.topk(p.top_k, -1).indices
                return [(top == label.unsqueeze(-1)).any(-1).float().mean()]
        return run

    # --- running ---------------------------------------------------------------------------
    def forward(self):
        """Runs every layer; returns the weighted loss (None without loss layers) and blobs."""
        blobs = {}
        loss = None
        for step in self.steps:
            tops = step.run([blobs[b] for b in step.bottoms])
            for name, tensor, weight in zip(step.tops, tops, step.loss_weights):
                blobs[name] = tensor
                if weight:
                    term = tensor.sum() * weight
                    loss = term if loss is None else loss + term
        return loss, blobs


def output_blobs(graph):
    used = {b for step in graph.steps for b in step.bottoms}
    return [t for step in graph.steps for t in step.tops if t not in used]


def caffe_top_shapes(log_text):
    """(layer name, [top shapes]) from `caffe time`'s "Setting up" / "Top shape" lines."""
    layers = []
    for line in log_text.splitlines():
        setup = re.search(r"\] Setting up (.*)$", line)
        if setup:
            layers.append((setup.group(1).strip(), []))
            continue
        top = re.search(r"\] Top shape: ?([0-9 ]*)\((\d+)\)\s*$", line)
        if top and layers:
            layers[-1][1].append(tuple(int(d) for d in top.group(1).split()))
    return layers


def check_shapes(graph, log_text, prototxt_names):
    caffe = [(name, shapes) for name, shapes in caffe_top_shapes(log_text)
             if not (name.endswith("_split") and name not in prototxt_names)]
    if not caffe:
        fail("no 'Setting up' / 'Top shape' lines in the Caffe log (was GLOG_minloglevel > 0?)")
    if len(caffe) != len(graph.shapes):
        fail(f"Caffe set up {len(caffe)} layers, the PyTorch graph has {len(graph.shapes)}")
    for (name, ours), (caffe_name, theirs) in zip(graph.shapes, caffe):
        if name != caffe_name:
            fail(f"layer order differs: PyTorch '{name}' where Caffe has '{caffe_name}'")
        # Caffe's scalar tops (losses, accuracies) are 0-axis blobs, as PyTorch's are.
        if [tuple(s) for s in ours] != theirs:
            fail(f"layer '{name}': PyTorch top shapes {ours} differ from Caffe's {theirs}")
    return len(caffe)


def caffe_layer_times(log_text):
    times = {}
    for line in log_text.splitlines():
        m = re.search(r"\]\s*(\S*)\t(forward|backward): ([0-9.eE+-]+) ms\.", line)
        if m:
            times[(m.group(1), m.group(2))] = float(m.group(3))
    return times


def conv_rates(graph, log_text):
    """GFLOP/s of the convolution layers in Caffe's per-layer times: forward 2*N*Cout*Hout*Wout*
    Cin/group*kh*kw FLOPs; backward the same for the weight gradient, and again for the input
    gradient where the bottom needs one (not for a convolution on the net's input)."""
    times = caffe_layer_times(log_text)
    flops_fwd = flops_bwd = ms_fwd = ms_bwd = 0.0
    for name, flops, needs_grad in graph.convs:
        if (name, "forward") not in times:
            return None
        flops_fwd += flops
        flops_bwd += flops * (2 if needs_grad else 1)
        ms_fwd += times[(name, "forward")]
        ms_bwd += times[(name, "backward")]
    if not graph.convs or ms_fwd <= 0 or ms_bwd <= 0:
        return None
    all_ms = sum(v for (_, kind), v in times.items())
    return {"conv_gflop": (flops_fwd + flops_bwd) / 1e9,
            "conv_gflops": (flops_fwd + flops_bwd) / (ms_fwd + ms_bwd) / 1e6,
            "conv_gflops_fwd": flops_fwd / ms_fwd / 1e6,
            "conv_gflops_bwd": flops_bwd / ms_bwd / 1e6,
            "conv_share_of_time": (ms_fwd + ms_bwd) / all_ms if all_ms else 0.0}


def use_device(torch, device):
    """Makes `device` where tensors and modules are created; returns a function that waits for
    it (timing on a GPU has to wait for the queued work)."""
    if device == "cpu":
        return lambda: None
    if not torch.cuda.is_available():
        fail("--device cuda: PyTorch sees no GPU")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    torch.set_default_device(device)
    print(f"torch_device {torch.cuda.get_device_name()}")
    return torch.cuda.synchronize


def time_command(args):
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(1701)
    synchronize = use_device(torch, args.device)
    pb2 = load_pb2(args.proto_dir)
    net_param = read_net(pb2, args.model)
    graph = CaffeGraph(torch, pb2, net_param, args.phase)
    print(f"torch_version {torch.__version__}")
    print(f"torch_threads {torch.get_num_threads()}")
    if args.caffe_log:
        with open(args.caffe_log) as f:
            log_text = f.read()
        names = {lp.name for lp in net_param.layer}
        print(f"shapes_checked {check_shapes(graph, log_text, names)}")
        if args.phase == "TRAIN":
            rates = conv_rates(graph, log_text)
            for key, value in (rates or {}).items():
                print(f"{key} {value:.4f}")
    params = list(graph.modules.parameters())
    print(f"torch_precision {args.precision}")
    # bf16: PyTorch's mixed precision (autocast runs convolutions and matrix products in bf16,
    # keeps fp32 weights and the numerically sensitive operations in fp32); backward follows
    # the forward's types, outside the context as PyTorch's recipes do.
    def run_forward():
        if args.precision == "fp32":
            return graph.forward()
        with torch.autocast(device_type=args.device, dtype=torch.bfloat16):
            return graph.forward()

    if args.phase == "TRAIN":
        outputs = None
        if not any(w for step in graph.steps for w in step.loss_weights):
            outputs = output_blobs(graph)
            print("note: no loss layer; backward starts from the sum of the outputs "
                  f"{outputs}", file=sys.stderr)

        def step():
            for p in params:
                p.grad = None    # zero_grad(set_to_none=True)
            synchronize()
            start = time.perf_counter()
            loss, blobs = run_forward()
            if loss is None:
                loss = sum(blobs[name].float().sum() for name in outputs)
            synchronize()
            middle = time.perf_counter()
            loss.backward()
            synchronize()
            return middle - start, time.perf_counter() - middle

        try:
            step()   # warm-up, as `caffe time` runs one forward and backward before timing
        except RuntimeError as error:
            if "inplace" not in str(error):
                raise
            # A Caffe in-place ReLU whose input PyTorch needs for the backward of its producer.
            print(f"note: in-place ReLU disabled ({str(error).splitlines()[0]})", file=sys.stderr)
            graph.inplace_relu = False
            step()
        if args.device == "cuda":
            step()   # cuDNN's autotuner timed its candidates in the first step
        forward = backward = 0.0
        start = time.perf_counter()
        for _ in range(args.iterations):
            f, b = step()
            forward += f
            backward += b
        total = time.perf_counter() - start
        print(f"train_fwd_ms {forward * 1e3 / args.iterations:.4f}")
        print(f"train_bwd_ms {backward * 1e3 / args.iterations:.4f}")
        print(f"train_ms {total * 1e3 / args.iterations:.4f}")
    else:
        graph.modules.eval()
        with torch.no_grad():
            run_forward()
            synchronize()
            start = time.perf_counter()
            for _ in range(args.iterations):
                run_forward()
            synchronize()
            total = time.perf_counter() - start
        print(f"inference_ms {total * 1e3 / args.iterations:.4f}")


def input_net_command(args):
    from google.protobuf import text_format
    pb2 = load_pb2(args.proto_dir)
    net = read_net(pb2, args.model)
    shape = [int(d) for d in args.shape.split(",")]
    data_types = {"Data", "ImageData", "HDF5Data", "WindowData", "MemoryData"}
    data_layers = [lp for lp in net.layer if lp.type in data_types]
    if not data_layers:
        fail(f"{args.model}: no data layer to replace")
    out = pb2.NetParameter()
    out.CopyFrom(net)
    del out.layer[:]
    inputs = out.layer.add()
    inputs.name = data_layers[0].name
    inputs.type = "Input"
    inputs.top.extend(data_layers[0].top)
    inputs.input_param.shape.add().dim.extend(shape)
    for _ in data_layers[0].top[1:]:
        inputs.input_param.shape.add().dim.extend(shape[:1])
    for lp in net.layer:
        if lp.type not in data_types:
            out.layer.add().CopyFrom(lp)
    sys.stdout.write(f"# {args.model} with its data layers replaced by an Input layer "
                     f"{'x'.join(map(str, shape))} (benchmarks/torch_from_prototxt.py)\n")
    sys.stdout.write(text_format.MessageToString(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    timing = commands.add_parser("time", help="time the net in PyTorch")
    timing.add_argument("--proto-dir", required=True, help="folder holding caffe_pb2.py")
    timing.add_argument("--model", required=True)
    timing.add_argument("--phase", choices=["TRAIN", "TEST"], default="TRAIN")
    timing.add_argument("--iterations", type=int, default=10)
    timing.add_argument("--threads", type=int, default=2)
    timing.add_argument("--caffe-log", help="`caffe time` log of the same net and phase")
    timing.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    timing.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                        help="bf16: the forward under torch.autocast(dtype=torch.bfloat16)")
    timing.set_defaults(run=time_command)
    convert = commands.add_parser("input-net", help="replace data layers by an Input layer")
    convert.add_argument("--proto-dir", required=True)
    convert.add_argument("--model", required=True)
    convert.add_argument("--shape", required=True, help="N,C,H,W of the first top")
    convert.set_defaults(run=input_net_command)
    args = parser.parse_args()
    if getattr(args, "iterations", 1) < 1:
        fail("--iterations must be at least 1")
    args.run(args)


if __name__ == "__main__":
    main()
