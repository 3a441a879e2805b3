// Legend as in recurrent_layer.hpp: T timesteps, N streams, H hidden size.
#include "caffe/layers/recurrent_layer.hpp"

#include <string>
#include <vector>

#include "caffe/kernels/math_functions.hpp"

namespace caffe {

template <typename Dtype>
int RecurrentLayer<Dtype>::MinBottomBlobs() const {
  int min_bottoms = 2;
  if (this->layer_param_.recurrent_param().expose_hidden()) {
    vector<string> inputs;
    RecurrentInputBlobNames(&inputs);
    min_bottoms += static_cast<int>(inputs.size());
  }
  return min_bottoms;
}

template <typename Dtype>
int RecurrentLayer<Dtype>::ExactNumTopBlobs() const {
  int num_tops = 1;
  if (this->layer_param_.recurrent_param().expose_hidden()) {
    vector<string> outputs;
    RecurrentOutputBlobNames(&outputs);
    num_tops += static_cast<int>(outputs.size());
  }
  return num_tops;
}

template <typename Dtype>
void RecurrentLayer<Dtype>::AddInputTransform(const string& g, int dim,
                                              const LayerParameter& hidden_param,
                                              const LayerParameter& biased_hidden_param,
                                              NetParameter* net_param,
                                              LayerParameter** cont_slice_param,
                                              LayerParameter** x_slice_param) const {
  const string w_x = "W_x" + g;  // W_xc (LSTM) or W_xh (RNN)
  LayerParameter slice_param;    // splits into timesteps
  slice_param.set_type("Slice");
  slice_param.mutable_slice_param()->set_axis(0);
  *cont_slice_param = net_param->add_layer();
  (*cont_slice_param)->CopyFrom(slice_param);
  (*cont_slice_param)->set_name("cont_slice");
  (*cont_slice_param)->add_bottom("cont");

  LayerParameter* x_transform_param = net_param->add_layer();
  x_transform_param->CopyFrom(biased_hidden_param);
  x_transform_param->set_name("x_transform");
  x_transform_param->add_param()->set_name(w_x);
  x_transform_param->add_param()->set_name("b_" + g);
  x_transform_param->add_bottom("x");
  x_transform_param->add_top(w_x + "_x");
  // x is an input of the unrolled net, which would otherwise get no gradient.
  x_transform_param->add_propagate_down(true);

  if (static_input_) {
    LayerParameter* static_transform_param = net_param->add_layer();
    static_transform_param->CopyFrom(hidden_param);
    static_transform_param->mutable_inner_product_param()->set_axis(1);
    static_transform_param->set_name(w_x + "_x_static");
    static_transform_param->add_param()->set_name(w_x + "_static");
    static_transform_param->add_bottom("x_static");
    static_transform_param->add_top(w_x + "_x_static_preshape");
    static_transform_param->add_propagate_down(true);

    LayerParameter* reshape_param = net_param->add_layer();
    reshape_param->set_type("Reshape");
    BlobShape* new_shape = reshape_param->mutable_reshape_param()->mutable_shape();
    new_shape->add_dim(1);   // one timestep
    new_shape->add_dim(-1);  // N, inferred so that the batch may change
    new_shape->add_dim(dim);
    reshape_param->set_name(w_x + "_x_static_reshape");
    reshape_param->add_bottom(w_x + "_x_static_preshape");
    reshape_param->add_top(w_x + "_x_static");
  }

  *x_slice_param = net_param->add_layer();
  (*x_slice_param)->CopyFrom(slice_param);
  (*x_slice_param)->set_name(w_x + "_x_slice");
  (*x_slice_param)->add_bottom(w_x + "_x");
}

template <typename Dtype>
void RecurrentLayer<Dtype>::CheckSequenceBottoms(const Blobs<Dtype>& bottom) const {
  LAYER_CHECK_GE(bottom[0]->num_axes(), 2)
      << "bottom[0] (x) " << bottom[0]->shape_string()
      << " must have at least 2 axes: (timesteps, streams, ...)";
  LAYER_CHECK_EQ(bottom[1]->num_axes(), 2) << "bottom[1] (cont) " << bottom[1]->shape_string()
                                           << " must have exactly 2 axes: (timesteps, streams)";
  LAYER_CHECK_EQ(bottom[1]->shape(0), bottom[0]->shape(0))
      << "bottom[1] (cont) " << bottom[1]->shape_string()
      << " must have as many timesteps as bottom[0] (x) " << bottom[0]->shape_string();
  LAYER_CHECK_EQ(bottom[1]->shape(1), bottom[0]->shape(1))
      << "bottom[1] (cont) " << bottom[1]->shape_string()
      << " must have as many streams as bottom[0] (x) " << bottom[0]->shape_string();
}

template <typename Dtype>
void RecurrentLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  CheckSequenceBottoms(bottom);
  num_timesteps_ = bottom[0]->shape(0);
  num_streams_ = bottom[0]->shape(1);
  LAYER_CHECK_GT(num_timesteps_, 0)
      << "bottom[0] (x) " << bottom[0]->shape_string() << " has no timesteps";
  LOG(INFO) << "Initializing recurrent layer: assuming input batch contains " << num_timesteps_
            << " timesteps of " << num_streams_ << " independent streams.";

  expose_hidden_ = this->layer_param_.recurrent_param().expose_hidden();
  vector<string> output_names, recur_input_names, recur_output_names;
  OutputBlobNames(&output_names);
  RecurrentInputBlobNames(&recur_input_names);
  RecurrentOutputBlobNames(&recur_output_names);
  const int num_recur_blobs = static_cast<int>(recur_input_names.size());
  CHECK_EQ(num_recur_blobs, static_cast<int>(recur_output_names.size()));

  // bottom[2] is the static input unless it is the first exposed hidden state.
  const int num_hidden_exposed = expose_hidden_ ? num_recur_blobs : 0;
  static_input_ = static_cast<int>(bottom.size()) > 2 + num_hidden_exposed;
  if (static_input_) {
    LAYER_CHECK_GE(bottom[2]->num_axes(), 1)
        << "bottom[2] (x_static) " << bottom[2]->shape_string() << " must have a stream axis";
    LAYER_CHECK_EQ(bottom[2]->shape(0), num_streams_)
        << "bottom[2] (x_static) " << bottom[2]->shape_string()
        << " must have as many streams as bottom[0] (x) " << bottom[0]->shape_string();
  }

  // The inputs every recurrent architecture shares; the subclass adds the rest.
  NetParameter net_param;
  LayerParameter* input_layer_param = net_param.add_layer();
  input_layer_param->set_type("Input");
  InputParameter* input_param = input_layer_param->mutable_input_param();
  auto add_input = [&](const string& name, const Blob<Dtype>& like) {
    input_layer_param->add_top(name);
    BlobShape* shape = input_param->add_shape();
    for (int dim : like.shape()) shape->add_dim(dim);
  };
  add_input("x", *bottom[0]);
  add_input("cont", *bottom[1]);
  if (static_input_) add_input("x_static", *bottom[2]);
  FillUnrolledNet(&net_param);

  // The unrolled layers are named after this layer, as in BVLC ("lstm_unit_1").
  const string& layer_name = this->layer_param_.name();
  if (!layer_name.empty()) {
    for (int i = 0; i < net_param.layer_size(); ++i) {
      LayerParameter* layer = net_param.mutable_layer(i);
      layer->set_name(layer_name + "_" + layer->name());
    }
  }
  // A pseudo-loss on every output makes the net run backward to the layers producing it (not to
  // everything, as force_backward would: cont needs no gradient). Backward starts below them.
  vector<string> pseudo_losses(output_names.size());
  for (size_t i = 0; i < output_names.size(); ++i) {
    LayerParameter* layer = net_param.add_layer();
    pseudo_losses[i] = output_names[i] + "_pseudoloss";
    layer->set_name(pseudo_losses[i]);
    layer->set_type("Reduction");
    layer->add_bottom(output_names[i]);
    layer->add_top(pseudo_losses[i]);
    layer->add_loss_weight(1);
  }

  try {
    unrolled_net_ = std::make_unique<Net<Dtype>>(net_param);
  } catch (const Error& error) {
    // E.g. an x without the values axis its InnerProduct reads: name this layer and the input.
    LAYER_THROW() << "cannot unroll over bottom[0] (x) " << bottom[0]->shape_string() << ": "
                  << error.what();
  }
  unrolled_net_->set_debug_info(this->layer_param_.recurrent_param().debug_info());

  x_input_blob_ = unrolled_net_->blob_by_name("x").get();
  cont_input_blob_ = unrolled_net_->blob_by_name("cont").get();
  x_static_input_blob_ = static_input_ ? unrolled_net_->blob_by_name("x_static").get() : nullptr;
  recur_input_blobs_.resize(num_recur_blobs);
  recur_output_blobs_.resize(num_recur_blobs);
  for (int i = 0; i < num_recur_blobs; ++i) {
    recur_input_blobs_[i] = unrolled_net_->blob_by_name(recur_input_names[i]).get();
    recur_output_blobs_[i] = unrolled_net_->blob_by_name(recur_output_names[i]).get();
  }
  CHECK_EQ(static_cast<int>(top.size()) - num_hidden_exposed,
           static_cast<int>(output_names.size()));
  output_blobs_.resize(output_names.size());
  for (size_t i = 0; i < output_names.size(); ++i) {
    output_blobs_[i] = unrolled_net_->blob_by_name(output_names[i]).get();
  }
  CHECK_EQ(2 + num_recur_blobs + static_input_, unrolled_net_->num_inputs());

  // This layer's parameters are the unrolled net's, each once: the owners, not the sharers.
  // Weights given with the layer parameter (a net built with its .caffemodel blobs) are loaded
  // into them.
  const vector<shared_ptr<Blob<Dtype>>> given = this->blobs_;
  this->blobs_.clear();
  for (size_t i = 0; i < unrolled_net_->params().size(); ++i) {
    if (unrolled_net_->param_owners()[i] == -1) {
      LOG(INFO) << "Adding parameter " << i << ": " << unrolled_net_->param_display_names()[i];
      this->blobs_.push_back(unrolled_net_->params()[i]);
    }
  }
  if (!given.empty()) {
    LAYER_CHECK_EQ(given.size(), this->blobs_.size())
        << "the layer parameter gives " << given.size() << " weight blobs; this " << this->type()
        << " layer has " << this->blobs_.size();
    for (size_t i = 0; i < given.size(); ++i) {
      LAYER_CHECK(given[i]->shape() == this->blobs_[i]->shape())
          << "weight blob " << i << " has shape " << given[i]->shape_string() << "; expected "
          << this->blobs_[i]->shape_string();
      this->blobs_[i]->CopyFrom(*given[i]);
    }
  }
  for (const auto& layer : unrolled_net_->layers()) {
    for (size_t j = 0; j < layer->blobs().size(); ++j) {
      CHECK(layer->param_propagate_down(static_cast<int>(j)))
          << "param_propagate_down not set for a param of unrolled layer "
          << layer->layer_param().name();
    }
  }
  this->param_propagate_down_.assign(this->blobs_.size(), true);

  // No gradient crosses from one batch into the previous one.
  for (Blob<Dtype>* blob : recur_output_blobs_) {
    caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  }

  const vector<string>& layer_names = unrolled_net_->layer_names();
  last_layer_index_ = static_cast<int>(layer_names.size() - 1 - pseudo_losses.size());
  for (size_t i = 0; i < pseudo_losses.size(); ++i) {
    CHECK_EQ(layer_names[last_layer_index_ + 1 + i], pseudo_losses[i]);
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  CheckSequenceBottoms(bottom);
  LAYER_CHECK_EQ(bottom[0]->shape(0), num_timesteps_)
      << "bottom[0] (x) " << bottom[0]->shape_string()
      << " changed its number of timesteps since setup; the unrolled net has " << num_timesteps_;
  num_streams_ = bottom[0]->shape(1);
  x_input_blob_->ReshapeLike(*bottom[0]);
  cont_input_blob_->ReshapeLike(*bottom[1]);
  if (static_input_) {
    LAYER_CHECK_EQ(bottom[2]->shape(0), num_streams_)
        << "bottom[2] (x_static) " << bottom[2]->shape_string()
        << " must have as many streams as bottom[0] (x) " << bottom[0]->shape_string();
    x_static_input_blob_->ReshapeLike(*bottom[2]);
  }
  vector<BlobShape> recur_input_shapes;
  RecurrentInputShapes(&recur_input_shapes);
  CHECK_EQ(recur_input_shapes.size(), recur_input_blobs_.size());
  for (size_t i = 0; i < recur_input_shapes.size(); ++i) {
    recur_input_blobs_[i]->Reshape(recur_input_shapes[i]);
  }
  unrolled_net_->Reshape();

  x_input_blob_->ShareData(*bottom[0]);
  x_input_blob_->ShareDiff(*bottom[0]);
  cont_input_blob_->ShareData(*bottom[1]);
  if (static_input_) {
    x_static_input_blob_->ShareData(*bottom[2]);
    x_static_input_blob_->ShareDiff(*bottom[2]);
  }
  if (expose_hidden_) {
    const int bottom_offset = 2 + static_input_;
    for (size_t i = bottom_offset, j = 0; i < bottom.size(); ++i, ++j) {
      LAYER_CHECK(recur_input_blobs_[j]->shape() == bottom[i]->shape())
          << "bottom[" << i << "] (hidden state input) " << bottom[i]->shape_string()
          << " must have shape " << recur_input_blobs_[j]->shape_string()
          << ": (1, streams, num_output)";
      recur_input_blobs_[j]->ShareData(*bottom[i]);
    }
  }
  for (size_t i = 0; i < output_blobs_.size(); ++i) {
    top[i]->ReshapeLike(*output_blobs_[i]);
    top[i]->ShareData(*output_blobs_[i]);
    top[i]->ShareDiff(*output_blobs_[i]);
  }
  if (expose_hidden_) {
    for (size_t i = output_blobs_.size(), j = 0; i < top.size(); ++i, ++j) {
      top[i]->ReshapeLike(*recur_output_blobs_[j]);
    }
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::Reset() {
  for (Blob<Dtype>* blob : recur_output_blobs_) {
    caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_data());
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // The timesteps share each parameter by pointing at its owner's memory. Someone may have
  // replaced the owner's memory since (a test net sharing a training net's weights replaces
  // this layer's blobs' data), so point the sharers at it again (BVLC's ShareWeights).
  const auto& params = unrolled_net_->params();
  const vector<int>& owners = unrolled_net_->param_owners();
  for (size_t i = 0; i < params.size(); ++i) {
    if (owners[i] < 0) continue;
    params[i]->ShareData(*params[owners[i]]);
    params[i]->ShareDiff(*params[owners[i]]);
  }
  CHECK_EQ(recur_input_blobs_.size(), recur_output_blobs_.size());
  if (!expose_hidden_) {
    // The last timestep's state starts this pass (zeroed by cont where a sequence restarts).
    for (size_t i = 0; i < recur_input_blobs_.size(); ++i) {
      CHECK_EQ(recur_input_blobs_[i]->count(), recur_output_blobs_[i]->count());
      caffe_copy(recur_input_blobs_[i]->count(), recur_output_blobs_[i]->cpu_data(),
                 recur_input_blobs_[i]->mutable_cpu_data());
    }
  }
  unrolled_net_->ForwardTo(last_layer_index_);
  if (expose_hidden_) {
    for (size_t i = output_blobs_.size(), j = 0; i < top.size(); ++i, ++j) {
      top[i]->ShareData(*recur_output_blobs_[j]);
    }
  }
}

template <typename Dtype>
void RecurrentLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the sequence indicators (bottom[1])";
  // As BVLC: the unrolled net computes the gradients of x (and x_static) and of the parameters
  // together, whichever of them was asked for.
  unrolled_net_->BackwardFrom(last_layer_index_);
}

template <typename Dtype>
bool RecurrentLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                             const Blobs<Dtype>& top,
                                             const vector<bool>& propagate_down,
                                             MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  const Net<Dtype>& net = *unrolled_net_;
  bool declared = true;
  auto declare = [&](int i) {
    declared = net.layers()[i]->DeclareMemoryUse(pass, net.bottom_vecs()[i], net.top_vecs()[i],
                                                 net.bottom_need_backward()[i], uses) &&
               declared;
  };
  if (pass == Pass::kForward) {
    if (!expose_hidden_) {  // the last state is copied in first
      for (size_t i = 0; i < recur_input_blobs_.size(); ++i) {
        uses->AddData(*recur_output_blobs_[i], kRead);
        uses->AddData(*recur_input_blobs_[i], kWrite);
      }
    }
    for (int i = 0; i <= last_layer_index_; ++i) declare(i);
  } else {
    for (int i = last_layer_index_; i >= 0; --i) {
      if (net.layer_need_backward()[i]) declare(i);
    }
  }
  return declared;
}

INSTANTIATE_CLASS(RecurrentLayer);

}  // namespace caffe
