#include "caffe/layers/base_data_layer.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/memory/pinned_host_allocations.hpp"
#include "caffe/timeline/timeline.hpp"

namespace caffe {

template <typename Dtype>
BaseDataLayer<Dtype>::BaseDataLayer(const LayerParameter& param)
    : Layer<Dtype>(param), transform_param_(param.transform_param()) {}

template <typename Dtype>
void BaseDataLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  output_labels_ = top.size() != 1;
  try {
    data_transformer_ = std::make_unique<DataTransformer<Dtype>>(transform_param_, this->phase_);
  } catch (const Error& error) {
    LAYER_THROW() << error.what();
  }
  data_transformer_->InitRand();
  DataLayerSetUp(bottom, top);
}

template <typename Dtype>
string BasePrefetchingDataLayer<Dtype>::WithoutPrefix(const string& message) const {
  const string prefix = this->error_prefix();
  return message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
}

template <typename Dtype>
BasePrefetchingDataLayer<Dtype>::BasePrefetchingDataLayer(const LayerParameter& param)
    : BaseDataLayer<Dtype>(param) {}

template <typename Dtype>
BasePrefetchingDataLayer<Dtype>::~BasePrefetchingDataLayer() {
  StopInternalThread();
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom,
                                                 const Blobs<Dtype>& top) {
  const uint32_t prefetch = this->layer_param_.data_param().prefetch();
  LAYER_CHECK_GE(prefetch, 1u) << "data_param.prefetch must be at least 1";
  // The tops may point into the batches, which therefore live as long as the layer.
  CHECK(prefetch_.empty()) << "a data layer is set up only once";
  for (uint32_t i = 0; i < prefetch; ++i) prefetch_.push_back(std::make_unique<Batch<Dtype>>());
  BaseDataLayer<Dtype>::LayerSetUp(bottom, top);
  // Allocate every batch here, on the owner's thread, before the prefetch thread touches them. In
  // GPU mode each batch crosses to the device every iteration: pinned memory copies at full speed.
  {
    std::optional<PinnedHostAllocations> pinned;
    if (Caffe::mode() == Caffe::GPU) pinned.emplace();
    for (auto& batch : prefetch_) {
      batch->data_.mutable_cpu_data();
      if (this->output_labels_) batch->label_.mutable_cpu_data();
      prefetch_free_.push(batch.get());
    }
  }
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) SetUpDeviceBatches();
#endif
  consumed_cursor_ = CurrentCursor();
  thread_seed_ = caffe_rng_rand();
  DLOG(INFO) << "Initializing prefetch";
  StartInternalThread();
  DLOG(INFO) << "Prefetch initialized.";
}

template <typename Dtype>
DataCursor BasePrefetchingDataLayer<Dtype>::CurrentCursor() const {
  DataCursor cursor = ReaderPosition();
  cursor.set_rng_state(this->data_transformer_->RandState());
  return cursor;
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::StartInternalThread() {
  CHECK(!thread_.joinable()) << "the prefetch thread is already running";
  stop_requested_ = false;
  thread_error_.clear();
  failed_ = false;
  ThreadContext context{Caffe::mode(), Caffe::device(), Caffe::solver_count(), Caffe::solver_rank(),
                        Caffe::multiprocess()};
  thread_ = std::thread(&BasePrefetchingDataLayer<Dtype>::InternalThreadEntry, this, context);
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::StopInternalThread() {
  if (!thread_.joinable()) return;
  stop_requested_ = true;
  prefetch_free_.Interrupt();  // releases the thread if it waits for a free batch
  thread_.join();
  prefetch_free_.ClearInterrupt();
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::InternalThreadEntry(ThreadContext context) {
  try {
    // This thread's own Caffe context (thread-local), configured like its owner's.
    Caffe::set_mode(context.mode);
    if (context.device >= 0) Caffe::SetDevice(context.device);
    Caffe::set_random_seed(static_cast<int64_t>(thread_seed_));
    Caffe::set_solver_count(context.solver_count);
    Caffe::set_solver_rank(context.solver_rank);
    Caffe::set_multiprocess(context.multiprocess);
    timeline::NameThread("prefetch " + this->layer_param_.name());
    while (!stop_requested_) {
      Batch<Dtype>* batch = nullptr;
      if (!prefetch_free_.pop(&batch)) break;
      timeline::Slice slice("data", "load batch");
      load_batch(batch);
#ifndef CPU_ONLY
      if (batch->device_) {
        timeline::Slice copy("data", "copy to device");
        const Blob<Dtype>* label = this->output_labels_ ? &batch->label_ : nullptr;
        batch->device_->Push(batch->data_.cpu_data(), batch->data_.count(),
                             label ? label->cpu_data() : nullptr, label ? label->count() : 0,
                             push_stream_->get());
      }
#endif
      batch->cursor_after_ = CurrentCursor();
      prefetch_full_.push(batch);
    }
  } catch (const std::exception& error) {
    thread_error_ = string("loading data failed: ") + WithoutPrefix(error.what());
    prefetch_full_.push(nullptr);
  } catch (...) {
    thread_error_ = "loading data failed: unknown exception";
    prefetch_full_.push(nullptr);
  }
}

template <typename Dtype>
Batch<Dtype>* BasePrefetchingDataLayer<Dtype>::NextBatch() {
  Batch<Dtype>* batch = nullptr;
  if (!failed_) {
    if (!prefetch_full_.try_pop(&batch)) {
      // The step waits for the prefetch thread: a data-bound net shows this slice at once.
      timeline::Slice wait("data", "wait for data");
      prefetch_full_.pop(&batch, "Data layer prefetch queue empty");
    }
    failed_ = (batch == nullptr);
  }
  // The thread wrote thread_error_ before pushing nullptr; the queue orders the two.
  LAYER_CHECK(!failed_) << thread_error_;
  consumed_cursor_ = batch->cursor_after_;
  return batch;
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom,
                                                  const Blobs<Dtype>& top) {
  if (prefetch_current_) prefetch_free_.push(prefetch_current_);
  prefetch_current_ = nullptr;
  Batch<Dtype>* batch = NextBatch();
  prefetch_current_ = batch;
  tops_borrow_batches_ = true;
  // Hand the batch's memory to the tops instead of copying it; the batch stays out of the free
  // queue until the next Forward.
  top[0]->ReshapeLike(batch->data_);
  top[0]->set_cpu_data(batch->data_.mutable_cpu_data());
  if (this->output_labels_) {
    top[1]->ReshapeLike(batch->label_);
    top[1]->set_cpu_data(batch->label_.mutable_cpu_data());
  }
}

#ifndef CPU_ONLY
template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::SetUpDeviceBatches() {
  push_stream_ = std::make_unique<PushStream>();
  for (auto& batch : prefetch_) {
    batch->device_ = RoomFor(*batch);
    if (!batch->device_) break;  // one warning; the device is full
  }
}

template <typename Dtype>
std::unique_ptr<DeviceBatch<Dtype>> BasePrefetchingDataLayer<Dtype>::RoomFor(
    const Batch<Dtype>& batch) const {
  try {
    return std::make_unique<DeviceBatch<Dtype>>(batch.data_.count(),
                                                this->output_labels_ ? batch.label_.count() : 0);
  } catch (const Error& error) {
    LOG(WARNING) << this->error_prefix() << "a prefetched batch stays on the host, copied to "
                 << "the GPU as the net reads it: " << error.what();
    return nullptr;
  }
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom,
                                                  const Blobs<Dtype>& top) {
  if (tops_borrow_batches_) {
    // The tops' host side points into the batch, which stays out of the free queue until the
    // next Forward: a later read back to the host (or an in-place layer's result copied home)
    // lands in memory no other thread touches. Reading gpu_data() copies the batch to each
    // top's device side (the head becomes SYNCED).
    Forward_cpu(bottom, top);
    for (Blob<Dtype>* blob : top) {
      if (blob->count() > 0) blob->gpu_data();
    }
    return;
  }
  Batch<Dtype>* batch = NextBatch();
  Blob<Dtype>* label_top = this->output_labels_ ? top[1] : nullptr;
  top[0]->ReshapeLike(batch->data_);
  if (label_top) label_top->ReshapeLike(batch->label_);
  if (batch->device_ && batch->device_->holds()) {
    // The tops' device side becomes the current one (a top with no values gets none).
    auto device_of = [](Blob<Dtype>* blob) {
      return blob != nullptr && blob->count() > 0 ? blob->mutable_gpu_data() : nullptr;
    };
    batch->device_->Pull(device_of(top[0]), top[0]->count(), device_of(label_top),
                         label_top ? label_top->count() : 0);
    ++batches_from_device_;
  } else {
    // Copies that return when done, so the batch can go back to the thread at once.
    auto copy_in = [](const Blob<Dtype>& from, Blob<Dtype>* to) {
      if (to->count() == 0) return;
      caffe_gpu_memcpy(to->count() * sizeof(Dtype), from.cpu_data(), to->mutable_gpu_data());
    };
    copy_in(batch->data_, top[0]);
    if (label_top) copy_in(batch->label_, label_top);
    // The batch outgrew its room (a batch of 1 from records of any size): the room grows.
    if (batch->device_) batch->device_ = RoomFor(*batch);
  }
  prefetch_free_.push(batch);
}
#endif

template <typename Dtype>
DataCursor BasePrefetchingDataLayer<Dtype>::SaveCursor() const {
  DataCursor cursor = consumed_cursor_;
  cursor.set_layer(this->layer_param_.name());
  return cursor;
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::RestoreCursor(const DataCursor& cursor) {
  LAYER_CHECK(cursor.layer().empty() || cursor.layer() == this->layer_param_.name())
      << "the saved data position belongs to layer '" << cursor.layer() << "'";
  StopInternalThread();
  // Batches read ahead from the old position are discarded; the failure marker too.
  Batch<Dtype>* batch = nullptr;
  while (prefetch_full_.try_pop(&batch)) {
    if (batch) prefetch_free_.push(batch);
  }
  try {
    SeekReader(cursor);
    this->data_transformer_->SetRandState(cursor.rng_state());
  } catch (const Error& error) {
    // The reader is left at an unknown place: every Forward reports this until a good restore.
    thread_error_ = "the saved data position could not be restored: " + WithoutPrefix(error.what());
    failed_ = true;
    LAYER_THROW() << thread_error_;
  }
  consumed_cursor_ = CurrentCursor();
  StartInternalThread();
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::SetUpWorkers(uint32_t threads) {
  constexpr uint32_t kMaxAutomaticThreads = 8;
  if (threads == 0) {
    threads = std::min(kMaxAutomaticThreads, std::max(1u, std::thread::hardware_concurrency()));
  }
  workers_ = std::make_unique<WorkerPool>(static_cast<int>(threads));
  VLOG(1) << this->error_prefix() << "decoding and transforming on " << threads << " threads";
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::TransformBatch(int count,
                                                     const std::function<void(int, Datum*)>& load,
                                                     const std::function<string(int)>& describe,
                                                     Batch<Dtype>* batch) {
  CHECK(workers_) << "SetUpWorkers must be called in DataLayerSetUp";
  CHECK_GT(count, 0);
  batch_records_.resize(count);
  batch_choices_.resize(count);
  {
    timeline::Slice read("data", "read and decode");
    workers_->Run(count, [&](int item) {
      try {
        load(item, &batch_records_[item]);
      } catch (const Error& error) {
        CAFFE_THROW() << describe(item) << ": " << error.what();
      }
    });
  }
  // Shapes and random draws in record order on this thread: the same batch for any pool size.
  DataTransformer<Dtype>* transformer = this->data_transformer_.get();
  for (int item = 0; item < count; ++item) {
    const Datum& record = batch_records_[item];
    try {
      vector<int> shape = transformer->InferBlobShape(record);
      if (item == 0) {
        // Each batch is shaped after its first record (with batch_size 1 any size works).
        shape[0] = count;
        batch->data_.Reshape(shape);
      }
      CAFFE_CHECK(shape[1] == batch->data_.channels() && shape[2] == batch->data_.height() &&
                  shape[3] == batch->data_.width())
          << "it transforms to " << shape[1] << "x" << shape[2] << "x" << shape[3]
          << " but the batch's first record to " << batch->data_.channels() << "x"
          << batch->data_.height() << "x" << batch->data_.width()
          << "; records of different sizes need batch_size 1";
    } catch (const Error& error) {
      CAFFE_THROW() << describe(item) << ": " << error.what();
    }
    batch_choices_[item] = transformer->DrawChoice(record.height(), record.width());
  }
  timeline::Slice transform("data", "transform");
  Dtype* top_data = batch->data_.mutable_cpu_data();
  const int image_size = batch->data_.count(1);
  workers_->Run(count, [&](int item) {
    transformer->Transform(batch_records_[item], batch_choices_[item],
                           top_data + static_cast<size_t>(item) * image_size);
  });
  if (this->output_labels_) {
    Dtype* labels = batch->label_.mutable_cpu_data();
    for (int item = 0; item < count; ++item) labels[item] = batch_records_[item].label();
  }
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::SeekReader(const DataCursor& cursor) {
  LOG(WARNING) << this->error_prefix()
               << "this layer type cannot seek to a saved data position; the resumed run reads "
                  "on from where the layer stands";
}

INSTANTIATE_CLASS(BaseDataLayer);
INSTANTIATE_CLASS(BasePrefetchingDataLayer);

}  // namespace caffe
