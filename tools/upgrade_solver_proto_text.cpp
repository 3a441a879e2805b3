// upgrade_solver_proto_text: rewrites a solver prototxt that uses the old `solver_type` enum with
// the current `type` string, as BVLC's tool.
//   upgrade_solver_proto_text OLD_SOLVER.prototxt NEW_SOLVER.prototxt
#include <glog/logging.h>

#include <iostream>
#include <string>

#include "caffe/common.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Upgrades a solver prototxt to the current format.\nUsage:\n"
      "    upgrade_solver_proto_text OLD_SOLVER.prototxt NEW_SOLVER.prototxt");
  caffe::GlobalInit(&argc, &argv);
  if (argc != 3) {
    std::cerr << "usage: upgrade_solver_proto_text OLD_SOLVER.prototxt NEW_SOLVER.prototxt\n";
    return 1;
  }
  try {
    caffe::SolverParameter solver_param;
    caffe::ReadProtoFromTextFile(argv[1], &solver_param);
    if (caffe::SolverNeedsTypeUpgrade(solver_param)) {
      caffe::UpgradeSolverAsNeeded(argv[1], &solver_param);
    } else {
      LOG(ERROR) << "File already in latest proto format: " << argv[1];
    }
    caffe::WriteProtoToTextFile(solver_param, argv[2]);
    LOG(INFO) << "Wrote upgraded SolverParameter text proto to " << argv[2];
    return 0;
  } catch (const caffe::Error& error) {
    std::cerr << "upgrade_solver_proto_text: error: " << error.what() << std::endl;
    return 1;
  }
}
