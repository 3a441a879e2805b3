// Reading and writing protobuf files (prototxt text, binary .caffemodel/.solverstate/.binaryproto)
// with errors that name the file, and for text files the line and column. Writes are atomic: the
// content goes to a temporary file in the same folder that is renamed over the target only when
// complete, so an interrupted write never leaves a truncated file behind.
#ifndef CAFFE_IO_IO_HPP_
#define CAFFE_IO_IO_HPP_

#include <google/protobuf/message.h>

#include <functional>
#include <string>
#include <vector>

#include "caffe/common.hpp"

namespace caffe {

using google::protobuf::Message;

bool FileExists(const string& path);
bool IsDirectory(const string& path);

/// Parses a text-format proto; throws caffe::Error "path:line:col: what" on a syntax error, or
/// naming the path when it cannot be read.
void ReadProtoFromTextFile(const string& filename, Message* proto);
/// Parses a binary proto (no size limit up to 2 GB); throws naming the path.
void ReadProtoFromBinaryFile(const string& filename, Message* proto);
/// Parses `text` as a text-format proto; `source` names it in errors.
void ParseProtoFromText(const string& text, const string& source, Message* proto);

void WriteProtoToTextFile(const Message& proto, const string& filename);
void WriteProtoToBinaryFile(const Message& proto, const string& filename);

/// Calls `write(temporary_path)`, then renames the temporary file to `filename`. If `write`
/// throws, the temporary file is removed and `filename` keeps its previous content.
void AtomicWrite(const string& filename, const std::function<void(const string&)>& write);

/// The path without its extension after the last '.', if any (".caffemodel" -> "").
string StripExtension(const string& path);
bool EndsWith(const string& value, const string& suffix);
/// The items with `separator` between them: "a, b, c" for Join({"a", "b", "c"}, ", ").
string Join(const vector<string>& items, const string& separator);

}  // namespace caffe

#endif  // CAFFE_IO_IO_HPP_
