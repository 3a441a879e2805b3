// upgrade_net_proto_binary: rewrites a binary net (.caffemodel) of any older format in the current
// format, weights included, as BVLC's tool.
//   upgrade_net_proto_binary OLD.caffemodel NEW.caffemodel
#include <glog/logging.h>

#include <iostream>
#include <string>

#include "caffe/common.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Upgrades a binary net (.caffemodel) to the current format.\nUsage:\n"
      "    upgrade_net_proto_binary OLD.caffemodel NEW.caffemodel");
  caffe::GlobalInit(&argc, &argv);
  if (argc != 3) {
    std::cerr << "usage: upgrade_net_proto_binary OLD.caffemodel NEW.caffemodel\n";
    return 1;
  }
  try {
    caffe::NetParameter net_param;
    caffe::ReadProtoFromBinaryFile(argv[1], &net_param);
    bool fully_compatible = true;
    if (caffe::NetNeedsUpgrade(net_param)) {
      caffe::UpgradeNetAsNeeded(argv[1], &net_param, &fully_compatible);
      LOG_IF(ERROR, !fully_compatible)
          << "Encountered error(s) while upgrading the net; see details above.";
    } else {
      LOG(ERROR) << "File already in latest proto format: " << argv[1];
    }
    caffe::WriteProtoToBinaryFile(net_param, argv[2]);
    LOG(INFO) << "Wrote upgraded NetParameter binary proto to " << argv[2];
    return fully_compatible ? 0 : 1;
  } catch (const caffe::Error& error) {
    std::cerr << "upgrade_net_proto_binary: error: " << error.what() << std::endl;
    return 1;
  }
}
