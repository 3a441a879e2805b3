// The caffe tool's flags, for its commands. They are defined, with their help text and defaults,
// in tools/caffe.cpp: gflags names that file in `caffe -help` and picks its flags by its name
// for `caffe -helpon=caffe`.
#ifndef CAFFE_TOOL_FLAGS_HPP_
#define CAFFE_TOOL_FLAGS_HPP_

#include <gflags/gflags.h>

DECLARE_string(gpu);
DECLARE_string(solver);
DECLARE_string(model);
DECLARE_string(phase);
DECLARE_int32(level);
DECLARE_string(stage);
DECLARE_string(snapshot);
DECLARE_string(weights);
DECLARE_int32(iterations);
DECLARE_string(sigint_effect);
DECLARE_string(reference);
DECLARE_double(tolerance);
DECLARE_string(sighup_effect);
DECLARE_string(sigterm_effect);
DECLARE_string(lr_scaling);
DECLARE_string(ddl);
DECLARE_bool(bvlc);
DECLARE_int64(lms);
DECLARE_double(lms_frac);
DECLARE_int32(lms_prefetch);
DECLARE_string(gpu_mem_limit);
DECLARE_string(timeline);
DECLARE_string(timeline_iters);

#endif  // CAFFE_TOOL_FLAGS_HPP_
