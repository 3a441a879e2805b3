#include "caffe/parallel/learner_gpu.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "caffe/util/error.hpp"

namespace caffe {

namespace {

std::vector<std::string> SplitIds(const std::string& list) {
  std::vector<std::string> ids;
  std::stringstream stream(list);
  for (std::string id; std::getline(stream, id, ',');) {
    if (!id.empty()) ids.push_back(id);
  }
  return ids;
}

int ParseDeviceId(const std::string& id, const std::string& variable) {
  CAFFE_CHECK(!id.empty() && std::all_of(id.begin(), id.end(), ::isdigit))
      << variable << " holds '" << id << "'; expected GPU ids (numbers, as 0,1) there";
  return std::stoi(id);
}

}  // namespace

int ChooseLearnerGpu(int requested, const LearnerPlace& place, std::string* how) {
  CAFFE_CHECK_GE(requested, 0) << "-gpu with -ddl: a GPU id is 0 or more";
  std::ostringstream said;
  const SchedulerGpus& granted = place.granted;
  const std::string on_host = " on host " + place.host;
  if (granted.lsf_task) {
    const std::string variable = "CUDA_VISIBLE_DEVICES" + std::to_string(place.local_rank);
    const std::vector<std::string> task = SplitIds(*granted.lsf_task);
    CAFFE_CHECK_LT(requested, static_cast<int>(task.size()))
        << "-gpu " << requested << " with -ddl: LSF granted learner " << place.local_rank << on_host
        << " " << task.size() << " GPU(s) (" << variable << "=" << *granted.lsf_task
        << "); -gpu 0 is the first";
    const std::string& gpu = task[requested];
    said << "GPU " << gpu << " of LSF's " << variable << "=" << *granted.lsf_task;
    int device = ParseDeviceId(gpu, variable);
    if (granted.visible) {
      const std::vector<std::string> visible = SplitIds(*granted.visible);
      const auto at = std::find(visible.begin(), visible.end(), gpu);
      CAFFE_CHECK(at != visible.end())
          << "LSF granted learner " << place.local_rank << on_host << " GPU " << gpu << " ("
          << variable << "), but CUDA_VISIBLE_DEVICES=" << *granted.visible
          << " hides it from the CUDA runtime";
      device = static_cast<int>(at - visible.begin());
      said << ", the runtime's device " << device;
    }
    *how = said.str();
    return device;
  }
  if (granted.slurm && !granted.visible) {
    const std::string variable = granted.slurm->substr(0, granted.slurm->find('='));
    const std::vector<std::string> gpus = SplitIds(granted.slurm->substr(variable.size() + 1));
    const int count = static_cast<int>(gpus.size());
    CAFFE_CHECK(count > 0 && place.local_size <= count && requested < count)
        << "-gpu " << requested << " with -ddl: " << place.local_size << " learners" << on_host
        << " but Slurm granted " << count << " GPU(s) (" << *granted.slurm
        << "): learners would share GPUs; start at most " << count
        << " learners per host, or ask Slurm for more GPUs";
    const std::string& gpu = gpus[(requested + place.local_rank) % count];
    *how = "GPU " + gpu + " of Slurm's " + *granted.slurm;
    return ParseDeviceId(gpu, variable);
  }
  const int count = place.visible_count;
  const std::string visible =
      granted.visible ? " (CUDA_VISIBLE_DEVICES=" + *granted.visible + ")" : "";
  CAFFE_CHECK_GT(count, 0) << "-gpu with -ddl: no GPU is visible" << on_host << visible;
  CAFFE_CHECK_LT(requested, count)
      << "-gpu " << requested << " with -ddl: " << count << " GPU(s) are visible" << on_host
      << visible << "; -gpu 0 is each learner's first";
  CAFFE_CHECK(count == 1 || place.local_size <= count)
      << "-gpu with -ddl: " << place.local_size << " learners" << on_host << " but " << count
      << " GPUs are visible" << visible << ": learners would share GPUs; start at most " << count
      << " learners per host (the rank file, or mpirun -npernode " << count
      << "), or ask the scheduler for " << place.local_size << " GPUs";
  const int device = (requested + place.local_rank) % count;
  said << "device " << device << " of the " << count << " visible" << visible << ", by local rank "
       << place.local_rank;
  *how = said.str();
  return device;
}

}  // namespace caffe
