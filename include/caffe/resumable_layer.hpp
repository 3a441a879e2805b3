// Layers that read a stream of records (data layers) implement this so snapshots can record where
// the stream is, and a resumed run continues with exactly the records (and random crops/mirrors)
// an uninterrupted run would have seen.
#ifndef CAFFE_RESUMABLE_LAYER_HPP_
#define CAFFE_RESUMABLE_LAYER_HPP_

#include "caffe/proto/caffe.pb.h"

namespace caffe {

class ResumableLayer {
 public:
  virtual ~ResumableLayer() = default;
  /// The position right after the last batch the net consumed, with the random state then.
  virtual DataCursor SaveCursor() const = 0;
  /// Continues from a saved position: the next Forward returns the batch that followed it.
  virtual void RestoreCursor(const DataCursor& cursor) = 0;
};

}  // namespace caffe

#endif  // CAFFE_RESUMABLE_LAYER_HPP_
