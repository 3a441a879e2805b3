// The caffe tool's registry of commands and its usage message (command_registry.hpp).
#include "caffe_tool/command_registry.hpp"

#include <iomanip>
#include <sstream>

namespace caffe_tool {

std::map<std::string, std::pair<Command, std::string>>& Commands() {
  static std::map<std::string, std::pair<Command, std::string>> commands;
  return commands;
}

std::string UsageMessage() {
  std::ostringstream usage;
  usage << "command line brew\nusage: caffe <command> <args>\n\ncommands:\n";
  for (const auto& command : Commands()) {
    usage << "  " << std::left << std::setw(16) << command.first << command.second.second << "\n";
  }
  return usage.str();
}

}  // namespace caffe_tool
