// Which GPU a DDL learner takes for -gpu N: from LSF's per-task list (renumbered through
// CUDA_VISIBLE_DEVICES), from Slurm's list where CUDA_VISIBLE_DEVICES is unset, else by local
// rank among the visible GPUs; more learners on a host than GPUs granted is one clear error
// naming the host, the counts and the variable.
#include <string>

#include "caffe/parallel/learner_gpu.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

LearnerPlace Place(int local_rank, int local_size, int visible_count) {
  LearnerPlace place;
  place.local_rank = local_rank;
  place.local_size = local_size;
  place.host = "node7";
  place.visible_count = visible_count;
  return place;
}

// The error of choosing for -gpu `requested` ("" when there is none).
std::string ChoiceError(int requested, const LearnerPlace& place) {
  std::string how;
  return ErrorOf([&] { ChooseLearnerGpu(requested, place, &how); });
}

}  // namespace

TEST(LearnerGpuTest, LocalRanksTakeTheVisibleGpusInTurn) {
  std::string how;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(ChooseLearnerGpu(0, Place(rank, 4, 4), &how), rank);
  }
  EXPECT_EQ(how, "device 3 of the 4 visible, by local rank 3");
  EXPECT_EQ(ChooseLearnerGpu(1, Place(1, 2, 4), &how), 2) << "-gpu 1: from the second on";
}

TEST(LearnerGpuTest, TheSchedulersVisibleListIsCountedFromZero) {
  // The job was granted GPUs 2 and 3; the script says -gpu 0.
  LearnerPlace place = Place(1, 2, 2);
  place.granted.visible = "2,3";
  std::string how;
  EXPECT_EQ(ChooseLearnerGpu(0, place, &how), 1);
  EXPECT_EQ(how, "device 1 of the 2 visible (CUDA_VISIBLE_DEVICES=2,3), by local rank 1");
}

TEST(LearnerGpuTest, LsfTasksTakeTheirOwnGpu) {
  LearnerPlace place = Place(1, 2, 4);
  place.granted.visible = "0,1,2,3";
  place.granted.lsf_task = "3";
  std::string how;
  EXPECT_EQ(ChooseLearnerGpu(0, place, &how), 3);
  EXPECT_EQ(how, "GPU 3 of LSF's CUDA_VISIBLE_DEVICES1=3, the runtime's device 3");
  // With a job-wide list of the granted GPUs only, the runtime numbers them from 0.
  place.granted.visible = "2,3";
  EXPECT_EQ(ChooseLearnerGpu(0, place, &how), 1);
  place.granted.visible.reset();
  EXPECT_EQ(ChooseLearnerGpu(0, place, &how), 3);
  place.granted.visible = "0,1";
  EXPECT_NE(ChoiceError(0, place).find("CUDA_VISIBLE_DEVICES=0,1 hides it"), std::string::npos)
      << ChoiceError(0, place);
  place.granted.visible.reset();
  EXPECT_NE(ChoiceError(1, place).find("LSF granted learner 1 on host node7 1 GPU(s) "
                                       "(CUDA_VISIBLE_DEVICES1=3)"),
            std::string::npos)
      << ChoiceError(1, place);
}

TEST(LearnerGpuTest, SlurmsListServesWhereNothingIsVisibleByName) {
  LearnerPlace place = Place(1, 2, 8);
  place.granted.slurm = "SLURM_STEP_GPUS=4,6";
  std::string how;
  EXPECT_EQ(ChooseLearnerGpu(0, place, &how), 6);
  EXPECT_EQ(how, "GPU 6 of Slurm's SLURM_STEP_GPUS=4,6");
  place.local_size = 3;
  EXPECT_NE(ChoiceError(0, place).find("3 learners on host node7 but Slurm granted 2 GPU(s) "
                                       "(SLURM_STEP_GPUS=4,6): learners would share GPUs"),
            std::string::npos)
      << ChoiceError(0, place);
  // Where CUDA_VISIBLE_DEVICES is set, the runtime's numbering wins.
  place.local_size = 2;
  place.granted.visible = "4,6";
  EXPECT_EQ(ChooseLearnerGpu(0, place, &how), 1);
}

TEST(LearnerGpuTest, MoreLearnersThanGpusIsOneClearError) {
  LearnerPlace place = Place(0, 4, 2);
  place.granted.visible = "2,3";
  EXPECT_EQ(ChoiceError(0, place),
            "-gpu with -ddl: 4 learners on host node7 but 2 GPUs are visible "
            "(CUDA_VISIBLE_DEVICES=2,3): learners would share GPUs; start at most 2 learners per "
            "host (the rank file, or mpirun -npernode 2), or ask the scheduler for 4 GPUs");
  EXPECT_NE(
      ChoiceError(2, Place(0, 1, 2)).find("-gpu 2 with -ddl: 2 GPU(s) are visible on host node7"),
      std::string::npos);
  EXPECT_NE(ChoiceError(0, Place(0, 1, 0)).find("no GPU is visible on host node7"),
            std::string::npos);
}

TEST(LearnerGpuTest, OneVisibleGpuPerLearnerIsEachOnesOwn) {
  // Slurm's --gpus-per-task: every learner sees one GPU, its own (DdlSession-level sharing of
  // one is found by the GPUs' UUIDs, after the choice).
  std::string how;
  EXPECT_EQ(ChooseLearnerGpu(0, Place(3, 4, 1), &how), 0);
}

}  // namespace caffe
