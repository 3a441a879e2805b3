// `caffe compare -model M -reference R.h5 [-weights W] [-tolerance T]`: runs a net on stored
// inputs and compares every blob, diff and param diff with stored reference results: how a user
// checks that a model ported from BVLC Caffe gives BVLC's numbers.
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "caffe/diagnostics/reference_check.hpp"
#include "caffe/net.hpp"
#include "caffe/solver.hpp"
#include "caffe_tool/command_registry.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"

namespace caffe_tool {
namespace {

using caffe::Net;
using std::string;
using std::vector;

int compare() {
  CAFFE_CHECK(!FLAGS_model.empty()) << "compare needs a model definition: -model FILE";
  CAFFE_CHECK(!FLAGS_reference.empty()) << "compare needs reference results: -reference FILE.h5";
  CAFFE_CHECK(FLAGS_tolerance >= 0) << "-tolerance must not be negative";
  const vector<string> stages = SplitList(FLAGS_stage);
  SetModeFromGpus(GetGpus());
  Net<float> caffe_net(FLAGS_model, GetPhase(caffe::TEST), FLAGS_level, &stages);
  if (!FLAGS_weights.empty()) caffe::LoadNetWeights(&caffe_net, FLAGS_weights);
  caffe::ReferenceData reference(FLAGS_reference);
  const vector<caffe::BlobComparison> comparisons =
      caffe::CompareNetWithReference(&caffe_net, reference);
  int compared = 0;
  vector<string> failures;
  std::cout << std::left << std::setw(44) << "blob" << std::right << std::setw(14) << "max abs err"
            << std::setw(14) << "max |ref|" << std::setw(14) << "relative"
            << "\n";
  for (const caffe::BlobComparison& comparison : comparisons) {
    if (!comparison.present) {
      std::cout << std::left << std::setw(44) << comparison.what << "  (not in the reference)\n";
      continue;
    }
    ++compared;
    std::cout << std::left << std::setw(44) << comparison.what << std::right;
    if (!comparison.shapes_match) {
      std::cout << "  shape differs from the reference  FAIL\n";
      failures.push_back(comparison.what);
      continue;
    }
    const bool ok = comparison.Within(FLAGS_tolerance);
    std::cout << std::setw(14) << std::setprecision(3) << comparison.max_abs_diff << std::setw(14)
              << comparison.max_abs_reference << std::setw(14) << comparison.relative()
              << (ok ? "" : "  FAIL") << "\n";
    if (!ok) failures.push_back(comparison.what);
  }
  std::cout << compared << " blobs compared, " << failures.size() << " above the tolerance "
            << FLAGS_tolerance << std::endl;
  CAFFE_CHECK(compared > 0) << "nothing in '" << FLAGS_reference << "' matched the net's blobs";
  CAFFE_CHECK(failures.empty()) << failures.size() << " of " << compared
                                << " blobs differ from the reference by more than "
                                << FLAGS_tolerance << " (relative), the first: " << failures[0];
  return 0;
}
REGISTER_CAFFE_COMMAND(compare, "compare a net's results with stored reference results");

}  // namespace
}  // namespace caffe_tool
