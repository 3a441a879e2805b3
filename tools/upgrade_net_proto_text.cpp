// upgrade_net_proto_text: rewrites a net prototxt of any older format (V0, V1, deprecated input
// fields, old data-transform fields, old BatchNorm params) in the current format, as BVLC's tool.
//   upgrade_net_proto_text OLD.prototxt NEW.prototxt
#include <glog/logging.h>

#include <iostream>
#include <string>

#include "caffe/common.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetUsageMessage(
      "Upgrades a net prototxt to the current format.\nUsage:\n"
      "    upgrade_net_proto_text OLD_NET.prototxt NEW_NET.prototxt");
  caffe::GlobalInit(&argc, &argv);
  if (argc != 3) {
    std::cerr << "usage: upgrade_net_proto_text OLD_NET.prototxt NEW_NET.prototxt\n";
    return 1;
  }
  try {
    caffe::NetParameter net_param;
    caffe::ReadProtoFromTextFile(argv[1], &net_param);
    bool fully_compatible = true;
    if (caffe::NetNeedsUpgrade(net_param)) {
      caffe::UpgradeNetAsNeeded(argv[1], &net_param, &fully_compatible);
      LOG_IF(ERROR, !fully_compatible)
          << "Encountered error(s) while upgrading prototxt; see details above.";
    } else {
      LOG(ERROR) << "File already in latest proto format: " << argv[1];
    }
    caffe::WriteProtoToTextFile(net_param, argv[2]);
    LOG(INFO) << "Wrote upgraded NetParameter text proto to " << argv[2];
    return fully_compatible ? 0 : 1;
  } catch (const caffe::Error& error) {
    std::cerr << "upgrade_net_proto_text: error: " << error.what() << std::endl;
    return 1;
  }
}
