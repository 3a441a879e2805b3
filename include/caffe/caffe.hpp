// Caffe's public interface in one include, as BVLC's caffe/caffe.hpp was: what a program that
// loads, runs or trains nets uses (examples/cpp_classification/classification.cpp includes only
// this). The headers of single layers, solvers and utilities can also be included on their own.
#ifndef CAFFE_CAFFE_HPP_
#define CAFFE_CAFFE_HPP_

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/filler.hpp"
#include "caffe/io/image_io.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/layer.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/net.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/solver.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/util/benchmark.hpp"

#endif  // CAFFE_CAFFE_HPP_
