#include "caffe/snapshot_files.hpp"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <regex>
#include <utility>

#include "caffe/common.hpp"
#include "caffe/io/io.hpp"

namespace caffe {

namespace {

namespace fs = std::filesystem;

// PREFIX = FOLDER/BASE, as the solver joins it with "_iter_N.ext" (BASE may be empty).
struct PrefixParts {
  fs::path folder;
  std::string base;
};

PrefixParts SplitPrefix(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  if (slash == std::string::npos) return {".", prefix};
  return {slash == 0 ? fs::path("/") : fs::path(prefix.substr(0, slash)), prefix.substr(slash + 1)};
}

std::string JoinPrefix(const std::string& prefix, const std::string& name) {
  const size_t slash = prefix.rfind('/');
  return slash == std::string::npos ? name : prefix.substr(0, slash + 1) + name;
}

// The names BASE + `tail` (a regular expression), BASE matched literally.
std::regex FilePattern(const PrefixParts& parts, const char* tail) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex(std::regex_replace(parts.base, special, R"(\$&)") + tail);
}

// The file names in the prefix's folder (none if it cannot be read).
std::vector<std::string> FolderNames(const PrefixParts& parts) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(parts.folder, error), end; !error && it != end;
       it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

bool ProcessRuns(int pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// The solver state of a snapshot, whichever format it is in (the parts a resume needs first).
SolverState ReadSolverStateHeader(const std::string& state) {
  SolverState header;
  if (EndsWith(state, ".h5")) {
    Hdf5File file(state, H5F_ACC_RDONLY);
    ReadHdf5SolverStateHeader(file.id(), state, &header);
  } else {
    ReadProtoFromBinaryFile(state, &header);
  }
  return header;
}

}  // namespace

void ReadHdf5SolverStateHeader(hid_t file, const std::string& path, SolverState* state) {
  if (hdf5_path_exists(file, kResumeStateDataset)) {
    ParseProtoFromText(hdf5_load_string(file, kResumeStateDataset), path, state);
  }
  state->set_iter(hdf5_load_int(file, "iter"));
  if (hdf5_path_exists(file, "learned_net")) {
    state->set_learned_net(hdf5_load_string(file, "learned_net"));
  }
  state->set_current_step(hdf5_load_int(file, "current_step"));
}

std::vector<SnapshotOnDisk> ListSnapshots(const std::string& prefix) {
  const PrefixParts parts = SplitPrefix(prefix);
  const std::regex pattern = FilePattern(parts, R"(_iter_(\d+)\.solverstate(\.h5)?)");
  std::vector<SnapshotOnDisk> found;
  for (const std::string& name : FolderNames(parts)) {
    std::smatch match;
    if (!std::regex_match(name, match, pattern)) continue;
    found.push_back({JoinPrefix(prefix, name), std::stoi(match[1].str())});
  }
  std::sort(found.begin(), found.end(), [](const SnapshotOnDisk& a, const SnapshotOnDisk& b) {
    return a.iter != b.iter ? a.iter > b.iter : a.state < b.state;
  });
  return found;
}

std::string WhySnapshotIsIncomplete(const std::string& state) {
  try {
    const SolverState header = ReadSolverStateHeader(state);
    if (!header.has_learned_net()) return "";
    const std::string& weights = header.learned_net();
    if (!FileExists(weights)) return "the weights it names, '" + weights + "', are missing";
    if (EndsWith(weights, ".h5")) {
      Hdf5File file(weights, H5F_ACC_RDONLY);
    } else {
      NetParameter net;
      ReadProtoFromBinaryFile(weights, &net);
    }
    return "";
  } catch (const Error& error) {
    return error.what();
  }
}

std::optional<SnapshotOnDisk> LatestCompleteSnapshot(const std::string& prefix) {
  for (const SnapshotOnDisk& snapshot : ListSnapshots(prefix)) {
    const std::string why = WhySnapshotIsIncomplete(snapshot.state);
    if (why.empty()) return snapshot;
    LOG(WARNING) << "Skipping snapshot " << snapshot.state << " (iteration " << snapshot.iter
                 << "): it is incomplete: " << why;
  }
  return std::nullopt;
}

int SnapshotLearners(const std::string& state) { return ReadSolverStateHeader(state).learners(); }

SnapshotPrefixLock::SnapshotPrefixLock(const std::string& prefix) : path_(prefix + ".lock") {
  while (true) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    CAFFE_CHECK(fd_ >= 0) << "cannot create the lock file '" << path_ << "' of snapshot_prefix '"
                          << prefix << "': " << std::strerror(errno)
                          << "; check that the folder exists and is writable";
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      std::string holder(256, '\0');
      const ssize_t got = pread(fd_, holder.data(), holder.size() - 1, 0);
      holder.resize(got > 0 ? static_cast<size_t>(got) : 0);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
      close(fd_);
      fd_ = -1;
      CAFFE_CHECK(error != EWOULDBLOCK)
          << "snapshot_prefix '" << prefix << "' is in use by another training run ("
          << (holder.empty() ? std::string("holder unknown") : holder) << "; lock file " << path_
          << "): two runs on one prefix overwrite each other's snapshots; give this run "
          << "another snapshot_prefix, or wait for that run to end";
      CAFFE_THROW() << "cannot lock '" << path_ << "': " << std::strerror(error);
    }
    // The holder before us may have removed the file between our open and our lock: then the
    // lock is on a file nobody else can find, and we start again.
    struct stat opened = {}, named = {};
    if (fstat(fd_, &opened) == 0 && stat(path_.c_str(), &named) == 0 &&
        opened.st_ino == named.st_ino && opened.st_dev == named.st_dev) {
      break;
    }
    close(fd_);
  }
  const std::time_t now = std::time(nullptr);
  char started[64];
  std::strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  const std::string holder =
      "pid " + std::to_string(getpid()) + " on host " + HostName() + ", started " + started + "\n";
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, holder.data(), holder.size(), 0) < 0) {
    LOG(WARNING) << "Could not write this run's name into " << path_ << ": "
                 << std::strerror(errno);
  }
}

SnapshotPrefixLock::~SnapshotPrefixLock() { Release(); }

SnapshotPrefixLock::SnapshotPrefixLock(SnapshotPrefixLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

SnapshotPrefixLock& SnapshotPrefixLock::operator=(SnapshotPrefixLock&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void SnapshotPrefixLock::Release() {
  if (fd_ < 0) return;
  // Removed while still held, so that a run waiting for it never locks a removed file (above).
  unlink(path_.c_str());
  close(fd_);
  fd_ = -1;
}

std::vector<std::string> RemoveStaleSnapshotTemporaries(const std::string& prefix) {
  const PrefixParts parts = SplitPrefix(prefix);
  const std::regex pattern = FilePattern(parts, R"(_iter_\d+\..*\.tmp\.(\d+))");
  std::vector<std::string> removed;
  for (const std::string& name : FolderNames(parts)) {
    std::smatch match;
    if (!std::regex_match(name, match, pattern)) continue;
    const int pid = std::stoi(match[1].str());
    const std::string path = JoinPrefix(prefix, name);
    if (ProcessRuns(pid)) {
      LOG(WARNING) << "Leaving " << path << ": process " << pid
                   << " on this host still runs (is it another training run on this prefix?)";
      continue;
    }
    if (std::remove(path.c_str()) == 0) {
      LOG(INFO) << "Removed " << path << ", a snapshot file left unfinished by process " << pid
                << ", which no longer runs";
      removed.push_back(path);
    }
  }
  return removed;
}

}  // namespace caffe
