// The caffe tool's commands (train, test, time, compare, device_query): each command's file
// registers it by name with REGISTER_CAFFE_COMMAND, and main (tools/caffe.cpp) runs the one named
// on the command line.
#ifndef CAFFE_TOOL_COMMAND_REGISTRY_HPP_
#define CAFFE_TOOL_COMMAND_REGISTRY_HPP_

#include <functional>
#include <map>
#include <string>
#include <utility>

namespace caffe_tool {

/// A command: runs with the flags as parsed, returns the exit status, throws caffe::Error.
using Command = std::function<int()>;

/// The registered commands by name, each with its line of help.
std::map<std::string, std::pair<Command, std::string>>& Commands();

struct CommandRegisterer {
  CommandRegisterer(const std::string& name, Command command, const std::string& help) {
    Commands()[name] = {std::move(command), help};
  }
};

/// "command line brew", then every command with its help: `caffe -help`'s first lines, and what
/// a command line without a known command prints.
std::string UsageMessage();

}  // namespace caffe_tool

#define REGISTER_CAFFE_COMMAND(name, help) \
  static ::caffe_tool::CommandRegisterer g_register_##name(#name, &name, help)

#endif  // CAFFE_TOOL_COMMAND_REGISTRY_HPP_
