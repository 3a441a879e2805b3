// The bases of the layers that produce data rather than compute from bottoms. BaseDataLayer owns
// the DataTransformer; BasePrefetchingDataLayer runs a background thread that fills a ring of
// pre-allocated batches (a free queue and a full queue), so Forward only hands the next ready batch
// to the tops (a pointer swap) and the net never waits on reading or transforming. In GPU mode the
// thread also copies each batch to the device (memory/device_batch.hpp), so the net's thread does
// not wait for that transfer either. It also keeps,
// with every batch, where the reader stood after it, which makes exact resume possible:
// SaveCursor() is the position after the last batch the net consumed, RestoreCursor() continues
// from such a position with the identical batches. Within a batch the records are decoded and
// transformed on a pool of worker threads (TransformBatch); the random crops and flips are drawn
// in record order on the prefetch thread, so batches are the same for any number of workers.
#ifndef CAFFE_LAYERS_BASE_DATA_LAYER_HPP_
#define CAFFE_LAYERS_BASE_DATA_LAYER_HPP_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/data_transformer.hpp"
#include "caffe/layer.hpp"
#include "caffe/memory/device_batch.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/resumable_layer.hpp"
#include "caffe/util/blocking_queue.hpp"
#include "caffe/util/worker_pool.hpp"

namespace caffe {

/// A layer with no bottoms that produces data (top[0]) and optionally labels (top[1]); it sets up
/// the DataTransformer from transform_param and has no gradient.
template <typename Dtype>
class BaseDataLayer : public Layer<Dtype> {
 public:
  explicit BaseDataLayer(const LayerParameter& param);
  /// Creates and seeds the transformer, then calls DataLayerSetUp.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Reads the source and shapes the tops; subclasses implement it.
  virtual void DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {}
  /// Tops are shaped in DataLayerSetUp and by each batch in Forward.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}

 protected:
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}

  TransformationParameter transform_param_;
  std::unique_ptr<DataTransformer<Dtype>> data_transformer_;
  bool output_labels_ = false;
};

/// One prefetched batch: the images, the labels, and where the reader stood after it.
template <typename Dtype>
class Batch {
 public:
  Blob<Dtype> data_, label_;
  /// The reading position and transformer random state right after this batch.
  DataCursor cursor_after_;
#ifndef CPU_ONLY
  /// For a layer set up in GPU mode: the batch's room on the device, which the prefetch thread
  /// fills after load_batch.
  std::unique_ptr<DeviceBatch<Dtype>> device_;
#endif
};

/// A data layer whose batches are produced by load_batch on a background thread, data_param
/// .prefetch (default 4) batches ahead. The thread has its own Caffe context (mode, device,
/// solver count and rank copied from the owner, random seed drawn from the owner's generator at
/// setup). An exception in load_batch stops the thread; the Forward that would have taken that
/// batch throws it as a caffe::Error naming the layer.
template <typename Dtype>
class BasePrefetchingDataLayer : public BaseDataLayer<Dtype>, public ResumableLayer {
 public:
  explicit BasePrefetchingDataLayer(const LayerParameter& param);
  ~BasePrefetchingDataLayer() override;
  /// Sets up the layer and the batches, then starts the prefetch thread.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  /// The position right after the last batch Forward handed to the net (the setup position
  /// before the first Forward), with the transformer's random state at that point and this
  /// layer's name.
  DataCursor SaveCursor() const override;
  /// Stops the thread, drops the prefetched batches, moves the reader to `cursor` (from
  /// SaveCursor, possibly of an earlier run), restores the random state and restarts, so the next
  /// Forward returns what an uninterrupted run would have. Throws caffe::Error when the position
  /// does not exist in this layer's source.
  void RestoreCursor(const DataCursor& cursor) override;

  /// How many GPU-mode Forwards found their batch on the device already, copied there by the
  /// prefetch thread (the others copied it from the host on the net's thread).
  uint64_t batches_from_device() const { return batches_from_device_; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
#ifndef CPU_ONLY
  /// Copies the batch into the tops' device side, which becomes the current one. A layer set up
  /// in GPU mode has the batch on the device already (the prefetch thread put it there, from
  /// pinned memory): a device-to-device copy the net's thread does not wait for. Otherwise, or
  /// when the batch outgrew its room (which then grows), a copy from the host. After a CPU-mode
  /// Forward, whose tops point into the batches, the tops go on doing so (BVLC's way): the batch
  /// is handed over as Forward_cpu does and then copied to the device.
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
#endif

  /// Fills `batch` (data, labels) on the prefetch thread.
  virtual void load_batch(Batch<Dtype>* batch) = 0;
  /// Where the reader stands now (key, records_read); called on the prefetch thread after each
  /// batch and on the owner's thread while the thread is stopped. Default: no position.
  virtual DataCursor ReaderPosition() const { return DataCursor(); }
  /// Moves the reader to a saved position (thread stopped). Default, for readers that cannot
  /// seek: a warning, and reading continues from where it is.
  virtual void SeekReader(const DataCursor& cursor);

  /// Creates the worker pool TransformBatch uses: `threads` threads, the prefetch thread
  /// included (0: automatic, the machine's cores up to 8). Called from DataLayerSetUp.
  void SetUpWorkers(uint32_t threads);
  /// Fills `batch` with `count` records. On the workers, in parallel, load(i, &datum) puts record
  /// i as raw values (decoded) with its label into `datum`. Then, on this thread, the batch is
  /// shaped after record 0 (N = count), every record is checked against that shape and gets its
  /// crop and flip drawn in record order; finally the workers transform the records into the
  /// batch. Errors are thrown as "<describe(i)>: <reason>" for the first failing record i;
  /// describe is called on the workers too and must only read.
  void TransformBatch(int count, const std::function<void(int, Datum*)>& load,
                      const std::function<string(int)>& describe, Batch<Dtype>* batch);

  /// Starts the prefetch thread (the batches must be allocated).
  void StartInternalThread();
  /// Stops and joins the prefetch thread, if running; a subclass's destructor must call it before
  /// its members go away, since the thread runs its load_batch.
  void StopInternalThread();

  vector<std::unique_ptr<Batch<Dtype>>> prefetch_;
  BlockingQueue<Batch<Dtype>*> prefetch_free_;
  BlockingQueue<Batch<Dtype>*> prefetch_full_;  // nullptr: the thread failed, see thread_error_
  Batch<Dtype>* prefetch_current_ = nullptr;    // the batch the tops point into
  std::unique_ptr<WorkerPool> workers_;         // used by the prefetch thread only

 private:
  struct ThreadContext {
    Caffe::Brew mode;
    int device;
    int solver_count;
    int solver_rank;
    bool multiprocess;
  };
  void InternalThreadEntry(ThreadContext context);
  /// The next batch from the prefetch thread (throws what the thread failed with).
  Batch<Dtype>* NextBatch();
#ifndef CPU_ONLY
  /// In GPU mode, at setup: a room on the device for every batch, and the stream that fills
  /// them.
  void SetUpDeviceBatches();
  /// A room on the device for `batch` as it is shaped now; where the device has no room, a
  /// warning and null: that batch goes on being copied from the host.
  std::unique_ptr<DeviceBatch<Dtype>> RoomFor(const Batch<Dtype>& batch) const;
  std::unique_ptr<PushStream> push_stream_;
#endif
  /// The current reader position plus the transformer's random state.
  DataCursor CurrentCursor() const;
  /// `message` without this layer's error prefix, so rethrowing does not repeat it.
  string WithoutPrefix(const string& message) const;

  std::thread thread_;
  std::atomic<bool> stop_requested_{false};
  uint64_t thread_seed_ = 0;  // drawn once at setup, so restarts do not consume the owner's RNG
  string thread_error_;       // written by the thread before it pushes nullptr
  bool failed_ = false;       // Forward has seen the failure
  bool tops_borrow_batches_ = false;  // a CPU-mode Forward pointed the tops' host side into one
  uint64_t batches_from_device_ = 0;
  DataCursor consumed_cursor_;
  // TransformBatch's per-record scratch, reused from batch to batch (prefetch thread only).
  vector<Datum> batch_records_;
  vector<typename DataTransformer<Dtype>::Choice> batch_choices_;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_BASE_DATA_LAYER_HPP_
