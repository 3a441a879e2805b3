// The example scripts end to end, each run in a scratch copy of the repository layout (the
// scripts, build/bin linked to the tools under test, generated data): CIFAR-10's
// create_cifar10.sh on CIFAR-format batches written here and both stages of train_quick.sh,
// the second resumed from the first one's snapshot (--snapshot), with the iteration counts made
// small; MNIST's LeNet and autoencoder training scripts on small LMDBs; the siamese example's
// pair conversion, training and deploy net on MNIST-like idx files; ImageNet's
// create_imagenet.sh with RESIZE=true and make_imagenet_mean.sh on a small
// folder of JPEG images; train_full.sh's three stages; the training scripts' solver and net
// files; the download scripts of data/ on local archives (unpacking, size checks, errors); and
// the feature extraction readme's steps on a folder of generated images.
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/net.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/lmdb_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

namespace fs = std::filesystem;

const fs::path kSource(SourceDir());

/// A scratch repository root: example folders copied from the source tree, build/bin linked.
class ExampleScriptTest : public ::testing::Test {
 protected:
  ExampleScriptTest() : dir_(MakeTempDir("caffe_test_examples")), root_(dir_.path()) {
    fs::create_directories(root_ / "build");
    fs::create_directory_symlink(fs::path(BuildDir()) / "bin", root_ / "build" / "bin");
    fs::create_directories(root_ / "examples");
    fs::copy_file(kSource / "examples" / "require_files.sh",
                  root_ / "examples" / "require_files.sh");
  }

  void CopyExample(const string& folder) {
    fs::create_directories(root_ / folder);
    for (const auto& entry : fs::directory_iterator(kSource / folder)) {
      const string extension = entry.path().extension().string();
      if (extension == ".sh" || extension == ".prototxt") {
        fs::copy_file(entry.path(), root_ / folder / entry.path().filename(),
                      fs::copy_options::overwrite_existing);
      }
    }
  }

  /// Runs `sh script` with `environment` ("NAME=value ..."); returns the exit status, with the
  /// output in *log.
  int RunScript(const string& script, const string& environment, string* log) {
    const string log_file = (root_ / "script.log").string();
    const string command =
        "env " + environment + " sh " + (root_ / script).string() + " > " + log_file + " 2>&1";
    const int status = std::system(command.c_str());
    *log = ReadWholeFile(log_file);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static int CountRecords(const string& path, Datum* first, const string& backend = "lmdb") {
    std::unique_ptr<db::DB> database = db::GetDB(backend);
    database->Open(path, db::READ);
    int count = 0;
    for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next(), ++count) {
      if (count == 0) {
        EXPECT_TRUE(first->ParseFromString(cursor->value()));
      }
    }
    return count;
  }

  ScopedTempDir dir_;
  fs::path root_;
};

/// `records` CIFAR-10 records: label r % 10, pixels a pattern that depends on the label.
string CifarBatch(int records, int seed) {
  string content;
  for (int r = 0; r < records; ++r) {
    const int label = (r + seed) % 10;
    content.push_back(static_cast<char>(label));
    for (int j = 0; j < 3 * 32 * 32; ++j) {
      content.push_back(static_cast<char>((label * 25 + (j % 32) * (label + 1) + r * 3) % 256));
    }
  }
  return content;
}

TEST_F(ExampleScriptTest, Cifar10CreateAndBothStagesOfTrainQuick) {
  CopyExample("examples/cifar10");
  fs::create_directories(root_ / "data" / "cifar10");
  for (int batch = 1; batch <= 5; ++batch) {
    std::ofstream(root_ / "data" / "cifar10" / ("data_batch_" + std::to_string(batch) + ".bin"),
                  std::ios::binary)
        << CifarBatch(40, batch);
  }
  std::ofstream(root_ / "data" / "cifar10" / "test_batch.bin", std::ios::binary)
      << CifarBatch(100, 0);

  // BVLC's solvers say solver_mode: GPU; here they train on the CPU. The training scripts' GPU
  // path is train_lenet.sh's (MnistTrainingScriptsTrainOnSmallLmdbs): CIFAR-10's nets on the
  // emulator's GPU took three minutes.
  const string example = (root_ / "examples" / "cifar10").string();
  for (const auto& entry : fs::directory_iterator(example)) {
    if (entry.path().filename().string().find("solver") != string::npos) {
      const string text = ReadWholeFile(entry.path().string());
      WriteWholeFile(entry.path().string(),
                     std::regex_replace(text, std::regex("solver_mode: GPU"), "solver_mode: CPU"));
    }
  }
  const string quick_solver = ReadWholeFile(example + "/cifar10_quick_solver.prototxt");
  ASSERT_NE(quick_solver.find("solver_mode: CPU"), string::npos);

  string log;
  ASSERT_EQ(RunScript("examples/cifar10/create_cifar10.sh", "", &log), 0) << log;
  Datum first;
  EXPECT_EQ(CountRecords(example + "/cifar10_train_lmdb", &first), 200);
  EXPECT_EQ(first.channels(), 3);
  EXPECT_EQ(first.height(), 32);
  EXPECT_EQ(CountRecords(example + "/cifar10_test_lmdb", &first), 100);
  BlobProto mean;
  ReadProtoFromBinaryFile(example + "/mean.binaryproto", &mean);
  EXPECT_EQ(mean.channels() * mean.height() * mean.width(), 3 * 32 * 32);

  // Stage 1 to iteration 6 at lr 0.001, stage 2 on to 10 at lr 0.0001 from the iteration-6
  // snapshot, one test batch per test.
  ASSERT_EQ(RunScript("examples/cifar10/train_quick.sh", "ITERS=6 ITERS_LR1=10 TEST_ITER=1", &log),
            0)
      << log;
  EXPECT_NE(log.find("Iteration 0, lr = 0.001"), string::npos) << log;
  EXPECT_NE(log.find("Test net output #0: accuracy"), string::npos) << log;
  EXPECT_TRUE(FileExists(example + "/cifar10_quick_iter_6.caffemodel"));
  EXPECT_TRUE(FileExists(example + "/cifar10_quick_iter_6.solverstate"));
  EXPECT_NE(log.find("Resuming from examples/cifar10/cifar10_quick_iter_6.solverstate"),
            string::npos)
      << log;
  // The second stage's solver writes HDF5 snapshots (snapshot_format: HDF5).
  EXPECT_TRUE(FileExists(example + "/cifar10_quick_iter_10.caffemodel.h5"));
  EXPECT_TRUE(FileExists(example + "/cifar10_quick_iter_10.solverstate.h5"));
  const std::regex done("Solving CIFAR10_quick");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(log.begin(), log.end(), done), std::sregex_iterator()), 2)
      << log;
  // The solver files themselves are untouched: the overrides went into temporary copies.
  EXPECT_EQ(ReadWholeFile(example + "/cifar10_quick_solver.prototxt"), quick_solver);

  // train_full.sh: three stages, each resumed from the previous one's HDF5 snapshot.
  ASSERT_EQ(RunScript("examples/cifar10/train_full.sh",
                      "ITERS=2 ITERS_LR1=3 ITERS_LR2=4 TEST_ITER=1", &log),
            0)
      << log;
  EXPECT_NE(log.find("Resuming from examples/cifar10/cifar10_full_iter_2.solverstate.h5"),
            string::npos)
      << log;
  EXPECT_NE(log.find("Resuming from examples/cifar10/cifar10_full_iter_3.solverstate.h5"),
            string::npos)
      << log;
  EXPECT_TRUE(FileExists(example + "/cifar10_full_iter_4.caffemodel.h5"));
}

/// Pixel j of MNIST-like image i (28 x 28): its digit, i % 10, drawn as a bar whose row follows
/// the digit.
unsigned char DigitBarPixel(uint32_t i, uint32_t j) {
  const uint32_t row = j / 28, col = j % 28;
  return row == 2 + 2 * (i % 10) && col >= 4 && col < 24 ? 150 + i % 100 : 0;
}

/// An LMDB of `count` MNIST-like records (DigitBarPixel, label r % 10).
void WriteMnistLmdb(const fs::path& path, int count) {
  WriteDatumLMDB(
      path.string(), count, 1, 28, 28, [](int i, int j) { return DigitBarPixel(i, j); },
      [](int i) { return i % 10; });
}

/// The first binary snapshot `log` says it wrote, relative to the scripts' root ("" if none).
string SnapshotWritten(const string& log) {
  static const std::regex snapshot("Snapshotting to binary proto file (\\S+)");
  std::smatch written;
  return std::regex_search(log, written, snapshot) ? written[1].str() : "";
}

/// Makes the scratch copy of `solver` train `iterations` steps, testing every iterations / 2
/// with 1 batch per test net and snapshotting only at the end; on the CPU unless `keep_mode`.
void ShortenSolver(const fs::path& solver, int iterations, bool keep_mode) {
  string text = ReadWholeFile(solver.string());
  const std::pair<const char*, string> edits[] = {
      {"max_iter: [0-9]+", "max_iter: " + std::to_string(iterations)},
      {"test_iter: [0-9]+", "test_iter: 1"},
      {"test_interval: [0-9]+", "test_interval: " + std::to_string(iterations / 2)},
      {"\nsnapshot: [0-9]+", "\nsnapshot: 0"},
      {"solver_mode: [A-Z]+", keep_mode ? "$&" : "solver_mode: CPU"},
  };
  for (const auto& [pattern, replacement] : edits) {
    text = std::regex_replace(text, std::regex(pattern), replacement);
  }
  WriteWholeFile(solver.string(), text);
}

TEST_F(ExampleScriptTest, CreateScriptsWithoutTheirInputsSaySoAndKeepTheDatabases) {
  // Script, the database it would rebuild, the first input it names, how to get that input.
  const std::tuple<string, string, string, string> cases[] = {
      {"examples/mnist/create_digits.sh", "examples/mnist/digits_train_lmdb",
       "data/digits/train-images-idx3-ubyte", "run data/digits/get_digits.sh first"},
      {"examples/mnist/create_mnist.sh", "examples/mnist/mnist_test_lmdb",
       "data/mnist/train-images-idx3-ubyte", "run data/mnist/get_mnist.sh first"},
      {"examples/cifar10/create_cifar10.sh", "examples/cifar10/cifar10_train_lmdb",
       "data/cifar10/data_batch_1.bin", "run data/cifar10/get_cifar10.sh first"},
      {"examples/siamese/create_mnist_siamese.sh", "examples/siamese/mnist_siamese_train_leveldb",
       "./data/mnist/train-images-idx3-ubyte",
       "run data/mnist/get_mnist.sh first (or set DATA=data/digits)"},
  };
  for (const auto& [script, database, input, hint] : cases) {
    CopyExample(fs::path(script).parent_path().string());
    fs::create_directories(root_ / database);
    WriteWholeFile((root_ / database / "data.mdb").string(), "records");
    string log;
    EXPECT_EQ(RunScript(script, "", &log), 1) << script << "\n" << log;
    EXPECT_EQ(log, fs::path(script).filename().string() + ": error: " + input +
                       " not found: " + hint + "\n");
    EXPECT_EQ(ReadWholeFile((root_ / database / "data.mdb").string()), "records") << script;
  }
}

TEST_F(ExampleScriptTest, MnistTrainingScriptsTrainOnSmallLmdbs) {
  CopyExample("examples/mnist");
  const fs::path example = root_ / "examples" / "mnist";
  WriteMnistLmdb(example / "mnist_train_lmdb", 120);
  WriteMnistLmdb(example / "mnist_test_lmdb", 50);
  // Script, solver, test nets (the consolidated solver and the autoencoder's test on the
  // training set and on the test set).
  const std::tuple<string, string, int> runs[] = {
      {"train_lenet.sh", "lenet_solver.prototxt", 1},
      {"train_lenet_adam.sh", "lenet_solver_adam.prototxt", 1},
      {"train_lenet_rmsprop.sh", "lenet_solver_rmsprop.prototxt", 1},
      {"train_lenet_consolidated.sh", "lenet_consolidated_solver.prototxt", 2},
      {"train_mnist_autoencoder.sh", "mnist_autoencoder_solver.prototxt", 2},
      {"train_mnist_autoencoder_adagrad.sh", "mnist_autoencoder_solver_adagrad.prototxt", 2},
      {"train_mnist_autoencoder_adadelta.sh", "mnist_autoencoder_solver_adadelta.prototxt", 2},
      {"train_mnist_autoencoder_nesterov.sh", "mnist_autoencoder_solver_nesterov.prototxt", 2},
  };
  for (const auto& [script, solver, test_nets] : runs) {
    // train_lenet.sh keeps BVLC's solver_mode: GPU, which trains on a GPU where there is one
    // (the emulator's, in its stage); the others train on the CPU, for time.
    ShortenSolver(example / solver, 4, script == "train_lenet.sh");
    string log;
    ASSERT_EQ(RunScript("examples/mnist/" + script, "", &log), 0) << script << "\n" << log;
    EXPECT_NE(log.find("Optimization Done."), string::npos) << script << "\n" << log;
    if (script == "train_lenet.sh" && Caffe::GpuAvailable()) {
      EXPECT_NE(log.find("Use GPU with device ID 0"), string::npos) << log;
    }
    for (int net = 0; net < 3; ++net) {
      const string testing = "Iteration 4, Testing net (#" + std::to_string(net) + ")";
      EXPECT_EQ(log.find(testing) != string::npos, net < test_nets) << script << ": " << testing;
    }
    const string written = SnapshotWritten(log);
    ASSERT_NE(written, "") << script << "\n" << log;
    EXPECT_TRUE(FileExists((root_ / written).string())) << written;
    if (script.rfind("train_mnist_autoencoder", 0) == 0) {
      // Its outputs: the sigmoid cross-entropy loss and the L2 error (weight 0).
      EXPECT_NE(log.find("Test net output #0: cross_entropy_loss"), string::npos) << log;
      EXPECT_NE(log.find("Test net output #1: l2_error"), string::npos) << log;
    }
  }
}

TEST_F(ExampleScriptTest, SiameseCreateTrainAndDeployedFeatures) {
  CopyExample("examples/siamese");
  fs::create_directories(root_ / "build" / "examples");
  fs::create_directory_symlink(fs::path(BuildDir()) / "examples" / "siamese",
                               root_ / "build" / "examples" / "siamese");
  // MNIST-like idx files: digit i % 10, drawn as a bar whose row follows the digit.
  const fs::path data = root_ / "data" / "mnist";
  fs::create_directories(data);
  auto digit = [](uint32_t i) -> unsigned char { return i % 10; };
  WriteMnistIdx((data / "train-images-idx3-ubyte").string(),
                (data / "train-labels-idx1-ubyte").string(), 200, 28, 28, DigitBarPixel, digit);
  WriteMnistIdx((data / "t10k-images-idx3-ubyte").string(),
                (data / "t10k-labels-idx1-ubyte").string(), 60, 28, 28, DigitBarPixel, digit);

  string log;
  ASSERT_EQ(RunScript("examples/siamese/create_mnist_siamese.sh", "", &log), 0) << log;
  const fs::path example = root_ / "examples" / "siamese";
  const string backend = db::HaveLevelDB() ? "leveldb" : "lmdb";
  Datum first;
  EXPECT_EQ(CountRecords((example / "mnist_siamese_train_leveldb").string(), &first, backend), 200);
  EXPECT_EQ(first.channels(), 2);
  EXPECT_EQ(CountRecords((example / "mnist_siamese_test_leveldb").string(), &first, backend), 60);

  ShortenSolver(example / "mnist_siamese_solver.prototxt", 100, false);
  ASSERT_EQ(RunScript("examples/siamese/train_mnist_siamese.sh", "", &log), 0) << log;
  EXPECT_NE(log.find("Optimization Done."), string::npos) << log;
  EXPECT_NE(log.find("Test net output #0: loss"), string::npos) << log;
  const string written = SnapshotWritten(log);
  ASSERT_NE(written, "") << log;

  // The deploy net (at batch 20) takes the trained weights layer by layer, and its 2-D features
  // put two images of one digit nearer each other than images of different digits.
  const fs::path deploy = example / "mnist_siamese_b20.prototxt";
  WriteWholeFile(deploy.string(),
                 std::regex_replace(ReadWholeFile((example / "mnist_siamese.prototxt").string()),
                                    std::regex("dim: 10000"), "dim: 20"));
  Net<float> net(deploy.string(), TEST);
  net.CopyTrainedLayersFrom((root_ / written).string());
  float* input = net.input_blobs()[0]->mutable_cpu_data();
  for (uint32_t i = 0; i < 20; ++i) {
    for (uint32_t j = 0; j < 28 * 28; ++j) input[i * 28 * 28 + j] = DigitBarPixel(i, j) / 256.f;
  }
  net.Forward();
  const float* feat = net.blob_by_name("feat")->cpu_data();
  double same = 0, different = 0;
  int same_pairs = 0, different_pairs = 0;
  for (int a = 0; a < 20; ++a) {
    for (int b = a + 1; b < 20; ++b) {
      const double distance =
          std::hypot(feat[2 * a] - feat[2 * b], feat[2 * a + 1] - feat[2 * b + 1]);
      if (a % 10 == b % 10) {
        same += distance;
        ++same_pairs;
      } else {
        different += distance;
        ++different_pairs;
      }
    }
  }
  EXPECT_LT(same / same_pairs, 0.5 * different / different_pairs)
      << "mean distance of images of one digit " << same / same_pairs << ", of different digits "
      << different / different_pairs;
}

/// Runs a data/ download script with `url_variable` pointing at a local file, through a `wget`
/// on PATH that copies file:// URLs (the machine needs no internet); returns the exit status.
int RunDownloadScript(const fs::path& root, const string& script, const string& url_variable,
                      const fs::path& archive, string* log) {
  const fs::path shim = root / "shim";
  fs::create_directories(shim);
  std::ofstream(shim / "wget") << "#!/bin/sh\n# wget --no-verbose -O OUT URL\n"
                                  "cp \"${4#file://}\" \"$3\"\n";
  fs::permissions(shim / "wget", fs::perms::owner_all);
  const string log_file = (root / "download.log").string();
  const string command = "env PATH=" + shim.string() + ":$PATH " + url_variable + "=file://" +
                         archive.string() + " bash " + (root / script).string() + " > " + log_file +
                         " 2>&1";
  const int status = std::system(command.c_str());
  *log = ReadWholeFile(log_file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(ExampleScriptTest, DownloadScriptsUnpackCheckAndExplainFailures) {
  fs::create_directories(root_ / "data" / "ilsvrc12");
  fs::create_directories(root_ / "data" / "cifar10");
  fs::copy_file(kSource / "data/download_lib.sh", root_ / "data/download_lib.sh");
  fs::copy_file(kSource / "data/ilsvrc12/get_ilsvrc_aux.sh",
                root_ / "data/ilsvrc12/get_ilsvrc_aux.sh");
  fs::copy_file(kSource / "data/cifar10/get_cifar10.sh", root_ / "data/cifar10/get_cifar10.sh");

  // get_ilsvrc_aux.sh unpacks the archive and removes it; a second run finds the files.
  const fs::path aux = root_ / "aux";
  fs::create_directories(aux);
  for (const string file :
       {"synsets.txt", "synset_words.txt", "train.txt", "val.txt", "imagenet_mean.binaryproto"}) {
    std::ofstream(aux / file) << file << "\n";
  }
  const string pack_aux =
      "tar -czf " + (root_ / "aux.tar.gz").string() + " -C " + aux.string() + " .";
  ASSERT_EQ(std::system(pack_aux.c_str()), 0);
  string log;
  ASSERT_EQ(RunDownloadScript(root_, "data/ilsvrc12/get_ilsvrc_aux.sh", "ILSVRC_AUX_URL",
                              root_ / "aux.tar.gz", &log),
            0)
      << log;
  EXPECT_EQ(ReadWholeFile((root_ / "data/ilsvrc12/synset_words.txt").string()),
            "synset_words.txt\n");
  EXPECT_FALSE(fs::exists(root_ / "data/ilsvrc12/caffe_ilsvrc12.tar.gz"));
  EXPECT_FALSE(fs::exists(root_ / "data/ilsvrc12/caffe_ilsvrc12.tar.gz.part"));
  ASSERT_EQ(RunDownloadScript(root_, "data/ilsvrc12/get_ilsvrc_aux.sh", "ILSVRC_AUX_URL",
                              root_ / "missing.tar.gz", &log),
            0)
      << log;
  EXPECT_NE(log.find("already here"), string::npos) << log;

  // get_cifar10.sh: a failed download, a file that is no archive and batches of the wrong size
  // each end in one line naming the script, and leave no partial download behind.
  const string cifar = "data/cifar10/get_cifar10.sh";
  EXPECT_EQ(RunDownloadScript(root_, cifar, "CIFAR10_URL", root_ / "missing.tar.gz", &log), 1);
  EXPECT_NE(log.find("get_cifar10.sh: could not download file://"), string::npos) << log;
  EXPECT_NE(log.find("set CIFAR10_URL to a mirror"), string::npos) << log;
  std::ofstream(root_ / "page.html") << "<html>Not found</html>\n";
  EXPECT_EQ(RunDownloadScript(root_, cifar, "CIFAR10_URL", root_ / "page.html", &log), 1);
  EXPECT_NE(log.find("get_cifar10.sh: file://" + (root_ / "page.html").string() +
                     " is not a valid .tar.gz archive"),
            string::npos)
      << log;
  const fs::path batches = root_ / "cifar-10-batches-bin";
  fs::create_directories(batches);
  for (const string batch : {"data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
                             "data_batch_5", "test_batch"}) {
    std::ofstream(batches / (batch + ".bin"), std::ios::binary) << CifarBatch(2, 0);
  }
  const string pack_cifar = "tar -czf " + (root_ / "cifar.tar.gz").string() + " -C " +
                            root_.string() + " cifar-10-batches-bin";
  ASSERT_EQ(std::system(pack_cifar.c_str()), 0);
  EXPECT_EQ(RunDownloadScript(root_, cifar, "CIFAR10_URL", root_ / "cifar.tar.gz", &log), 1);
  EXPECT_NE(log.find("data_batch_1.bin has 6146 bytes, expected 30730000"), string::npos) << log;
  for (const auto& entry : fs::directory_iterator(root_ / "data/cifar10")) {
    EXPECT_EQ(entry.path().string().find(".tar.gz"), string::npos) << entry.path() << " was left";
  }
}

TEST_F(ExampleScriptTest, TrainingScriptsNameSolversAndNetsThatExist) {
  // Every solver the training scripts name exists, and so does the net each solver names.
  const std::regex solver_flag("((examples|models)/[A-Za-z0-9_/]*solver[A-Za-z0-9_]*\\.prototxt)");
  const std::regex net_field("\nnet: \"([^\"]+)\"");
  int solvers = 0;
  for (const string folder :
       {"examples/mnist", "examples/cifar10", "examples/imagenet", "examples/siamese"}) {
    for (const auto& entry : fs::directory_iterator(kSource / folder)) {
      if (entry.path().extension() != ".sh") continue;
      const string script = ReadWholeFile(entry.path().string());
      for (auto match = std::sregex_iterator(script.begin(), script.end(), solver_flag);
           match != std::sregex_iterator(); ++match) {
        const fs::path solver = kSource / (*match)[1].str();
        ASSERT_TRUE(fs::exists(solver)) << entry.path() << " names " << solver;
        const string text = "\n" + ReadWholeFile(solver.string());
        ++solvers;
        if (text.find("\nnet_param") != string::npos) continue;  // the net is in the solver
        std::smatch net;
        ASSERT_TRUE(std::regex_search(text, net, net_field)) << solver;
        EXPECT_TRUE(fs::exists(kSource / net[1].str())) << solver << " names " << net[1];
      }
    }
  }
  // MNIST: LeNet (5: SGD, digits, Adam, RMSProp, consolidated), the autoencoder (4); CIFAR-10:
  // quick (2), full (3), sigmoid (2); ImageNet: CaffeNet, AlexNet, resume; siamese (1).
  EXPECT_EQ(solvers, 20);
}

#ifdef USE_OPENCV
TEST_F(ExampleScriptTest, ImagenetCreateWithResizeAndMean) {
  CopyExample("examples/imagenet");
  fs::create_directories(root_ / "data" / "ilsvrc12");
  for (const string split : {"train", "val"}) {
    fs::create_directories(root_ / split / "n01");
    std::ofstream list(root_ / "data" / "ilsvrc12" / (split + ".txt"));
    for (int i = 0; i < 4; ++i) {
      const string name = "n01/" + split + std::to_string(i) + ".JPEG";
      cv::imwrite((root_ / split / name).string(), PatternImage(20 + i * 7, 30 - i * 3, 3, i));
      list << name << " " << i << "\n";
    }
  }
  string log;
  EXPECT_EQ(RunScript("examples/imagenet/create_imagenet.sh", "", &log), 1);
  EXPECT_NE(log.find("Error: TRAIN_DATA_ROOT is not a path to a directory"), string::npos) << log;

  const string environment = "TRAIN_DATA_ROOT=" + (root_ / "train").string() +
                             "/ VAL_DATA_ROOT=" + (root_ / "val").string() + "/ RESIZE=true";
  ASSERT_EQ(RunScript("examples/imagenet/create_imagenet.sh", environment, &log), 0) << log;
  Datum first;
  EXPECT_EQ(CountRecords((root_ / "examples/imagenet/ilsvrc12_train_lmdb").string(), &first), 4);
  EXPECT_EQ(first.height(), 256);
  EXPECT_EQ(first.width(), 256);
  EXPECT_EQ(CountRecords((root_ / "examples/imagenet/ilsvrc12_val_lmdb").string(), &first), 4);

  ASSERT_EQ(RunScript("examples/imagenet/make_imagenet_mean.sh", "", &log), 0) << log;
  BlobProto mean;
  ReadProtoFromBinaryFile((root_ / "data/ilsvrc12/imagenet_mean.binaryproto").string(), &mean);
  EXPECT_EQ(mean.channels(), 3);
  EXPECT_EQ(mean.height(), 256);
  EXPECT_EQ(mean.width(), 256);
}

TEST_F(ExampleScriptTest, FeatureExtractionOfAFolderOfImages) {
  CopyExample("examples/feature_extraction");
  fs::create_directories(root_ / "images");
  for (int i = 0; i < 3; ++i) {
    cv::imwrite((root_ / "images" / ("image" + std::to_string(i) + ".jpg")).string(),
                PatternImage(300 - 20 * i, 280 + 30 * i, 3, i));
  }
  // The readme's steps for the list, as written.
  WriteWholeFile((root_ / "list.sh").string(),
                 "cd " + root_.string() +
                     "\nmkdir -p examples/_temp\n"
                     "find `pwd`/images -type f -exec echo {} \\; > examples/_temp/temp.txt\n"
                     "sed \"s/$/ 0/\" examples/_temp/temp.txt > examples/_temp/file_list.txt\n");
  string log;
  ASSERT_EQ(RunScript("list.sh", "", &log), 0) << log;
  EXPECT_EQ(NonLogLines(ReadWholeFile((root_ / "examples/_temp/file_list.txt").string())).size(),
            3u);
  BlobProto mean;
  mean.set_num(1);
  mean.set_channels(3);
  mean.set_height(256);
  mean.set_width(256);
  for (int i = 0; i < 3 * 256 * 256; ++i) mean.add_data(100 + i % 50);
  fs::create_directories(root_ / "data" / "ilsvrc12");
  WriteProtoToBinaryFile(mean, (root_ / "data/ilsvrc12/imagenet_mean.binaryproto").string());

  // The net as extract_features builds it, from here (the prototxt's paths made absolute), with
  // random weights scaled so that values keep their size through the layers.
  NetParameter param;
  ReadNetParamsFromTextFile((root_ / "examples/feature_extraction/imagenet_val.prototxt").string(),
                            &param);
  LayerParameter* data = param.mutable_layer(0);
  data->mutable_image_data_param()->set_source((root_ / "examples/_temp/file_list.txt").string());
  data->mutable_transform_param()->set_mean_file(
      (root_ / "data/ilsvrc12/imagenet_mean.binaryproto").string());
  param.mutable_state()->set_phase(TEST);
  Net<float> net(param);
  unsigned int seed = 1;
  for (Blob<float>* blob : net.learnable_params()) {
    const int fan_in = blob->num_axes() > 1 ? blob->count(1) : 1000;
    FillGaussian(blob, seed++, static_cast<float>(std::sqrt(2.0 / fan_in)));
  }
  NetParameter weights;
  net.ToProto(&weights, false);
  WriteProtoToBinaryFile(weights, (root_ / "caffenet.caffemodel").string());

  WriteWholeFile((root_ / "extract.sh").string(),
                 "cd " + root_.string() +
                     "\n./build/bin/extract_features caffenet.caffemodel "
                     "examples/feature_extraction/imagenet_val.prototxt fc7,prob "
                     "examples/_temp/features,examples/_temp/prob 1 lmdb\n");
  ASSERT_EQ(RunScript("extract.sh", "", &log), 0) << log;

  net.Forward();
  for (const auto& [blob_name, database] :
       {std::pair<string, string>{"fc7", "features"}, {"prob", "prob"}}) {
    const Blob<float>& blob = *net.blob_by_name(blob_name);
    ASSERT_EQ(blob.num(), 50);
    std::unique_ptr<db::DB> db = db::GetDB("lmdb");
    db->Open((root_ / "examples/_temp" / database).string(), db::READ);
    int records = 0;
    float largest = 0;
    for (auto cursor = db->NewCursor(); cursor->valid(); cursor->Next(), ++records) {
      ASSERT_LT(records, 50);
      char key[16];
      std::snprintf(key, sizeof(key), "%010d", records);
      EXPECT_EQ(cursor->key(), key);
      Datum datum;
      ASSERT_TRUE(datum.ParseFromString(cursor->value()));
      ASSERT_EQ(datum.float_data_size(), blob.count(1)) << blob_name;
      const float* expected = blob.cpu_data() + blob.offset(records);
      for (int i = 0; i < blob.count(1); ++i) {
        EXPECT_NEAR(datum.float_data(i), expected[i], 1e-4f * (1 + std::fabs(expected[i])))
            << blob_name << " record " << records << " value " << i;
        largest = std::max(largest, std::fabs(expected[i]));
      }
    }
    EXPECT_EQ(records, 50);
    EXPECT_GT(largest, 0) << blob_name << " is all zeros: the weights did not reach it";
  }
}
#endif  // USE_OPENCV

}  // namespace
}  // namespace caffe
