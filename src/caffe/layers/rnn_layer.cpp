// Legend as in rnn_layer.hpp. The unrolled net is BVLC's, layer for layer and name for name:
//   x_transform      W_xh_x = W_xh x + b_h, all timesteps at once        (params W_xh, b_h)
//   W_xh_x_static    W_xh_static x_static, reshaped to (1, N, H)         (param W_xh_static)
//   per timestep t:  h_conted_{t-1} = cont_t h_{t-1}                     (Scale)
//                    W_hh_h_{t-1} = W_hh h_conted_{t-1}                  (param W_hh, shared)
//                    h_t = tanh(W_hh_h_{t-1} + W_xh_x_t (+ static))      (Eltwise SUM, TanH)
//                    o_t = tanh(W_ho h_t + b_o)                          (params W_ho, b_o, shared)
//   o = concat(o_1 .. o_T).
#include "caffe/layers/rnn_layer.hpp"

#include <string>
#include <vector>

namespace caffe {

template <typename Dtype>
void RNNLayer<Dtype>::RecurrentInputBlobNames(vector<string>* names) const {
  *names = {"h_0"};
}

template <typename Dtype>
void RNNLayer<Dtype>::RecurrentOutputBlobNames(vector<string>* names) const {
  *names = {"h_" + std::to_string(this->num_timesteps_)};
}

template <typename Dtype>
void RNNLayer<Dtype>::RecurrentInputShapes(vector<BlobShape>* shapes) const {
  const int num_output = static_cast<int>(this->layer_param_.recurrent_param().num_output());
  shapes->assign(1, BlobShape());
  (*shapes)[0].add_dim(1);  // one timestep
  (*shapes)[0].add_dim(this->num_streams_);
  (*shapes)[0].add_dim(num_output);
}

template <typename Dtype>
void RNNLayer<Dtype>::OutputBlobNames(vector<string>* names) const {
  *names = {"o"};
}

template <typename Dtype>
void RNNLayer<Dtype>::FillUnrolledNet(NetParameter* net_param) const {
  const RecurrentParameter& recurrent_param = this->layer_param_.recurrent_param();
  const int num_output = static_cast<int>(recurrent_param.num_output());
  LAYER_CHECK_GE(num_output, 1) << "recurrent_param.num_output is 0; must be >= 1";

  // Templates of the layer kinds used below.
  LayerParameter hidden_param;  // W * input along axis 2, no bias
  hidden_param.set_type("InnerProduct");
  InnerProductParameter* hidden_ip = hidden_param.mutable_inner_product_param();
  hidden_ip->set_num_output(num_output);
  hidden_ip->set_bias_term(false);
  hidden_ip->set_axis(2);
  hidden_ip->mutable_weight_filler()->CopyFrom(recurrent_param.weight_filler());
  LayerParameter biased_hidden_param(hidden_param);
  biased_hidden_param.mutable_inner_product_param()->set_bias_term(true);
  biased_hidden_param.mutable_inner_product_param()->mutable_bias_filler()->CopyFrom(
      recurrent_param.bias_filler());
  LayerParameter sum_param;
  sum_param.set_type("Eltwise");
  sum_param.mutable_eltwise_param()->set_operation(EltwiseParameter_EltwiseOp_SUM);
  LayerParameter tanh_param;
  tanh_param.set_type("TanH");
  LayerParameter scale_param;  // multiplies by cont over the (timestep, stream) axes
  scale_param.set_type("Scale");
  scale_param.mutable_scale_param()->set_axis(0);

  vector<BlobShape> input_shapes;
  RecurrentInputShapes(&input_shapes);
  LayerParameter* input_layer_param = net_param->add_layer();
  input_layer_param->set_type("Input");
  input_layer_param->add_top("h_0");
  input_layer_param->mutable_input_param()->add_shape()->CopyFrom(input_shapes[0]);

  LayerParameter* cont_slice_param = nullptr;
  LayerParameter* x_slice_param = nullptr;
  this->AddInputTransform("h", num_output, hidden_param, biased_hidden_param, net_param,
                          &cont_slice_param, &x_slice_param);

  LayerParameter output_concat_layer;
  output_concat_layer.set_name("o_concat");
  output_concat_layer.set_type("Concat");
  output_concat_layer.add_top("o");
  output_concat_layer.mutable_concat_param()->set_axis(0);

  for (int t = 1; t <= this->num_timesteps_; ++t) {
    const string tm1s = std::to_string(t - 1);
    const string ts = std::to_string(t);
    cont_slice_param->add_top("cont_" + ts);
    x_slice_param->add_top("W_xh_x_" + ts);

    // A sequence starting at t (cont_t = 0) sees h_{t-1} = 0.
    LayerParameter* cont_h_param = net_param->add_layer();
    cont_h_param->CopyFrom(scale_param);
    cont_h_param->set_name("h_conted_" + tm1s);
    cont_h_param->add_bottom("h_" + tm1s);
    cont_h_param->add_bottom("cont_" + ts);
    cont_h_param->add_top("h_conted_" + tm1s);

    LayerParameter* w_hh_param = net_param->add_layer();
    w_hh_param->CopyFrom(hidden_param);
    w_hh_param->set_name("W_hh_h_" + tm1s);
    w_hh_param->add_param()->set_name("W_hh");
    w_hh_param->add_bottom("h_conted_" + tm1s);
    w_hh_param->add_top("W_hh_h_" + tm1s);

    LayerParameter* h_input_sum_param = net_param->add_layer();
    h_input_sum_param->CopyFrom(sum_param);
    h_input_sum_param->set_name("h_input_sum_" + ts);
    h_input_sum_param->add_bottom("W_hh_h_" + tm1s);
    h_input_sum_param->add_bottom("W_xh_x_" + ts);
    if (this->static_input_) h_input_sum_param->add_bottom("W_xh_x_static");
    h_input_sum_param->add_top("h_neuron_input_" + ts);

    LayerParameter* h_neuron_param = net_param->add_layer();
    h_neuron_param->CopyFrom(tanh_param);
    h_neuron_param->set_name("h_neuron_" + ts);
    h_neuron_param->add_bottom("h_neuron_input_" + ts);
    h_neuron_param->add_top("h_" + ts);

    LayerParameter* w_ho_param = net_param->add_layer();
    w_ho_param->CopyFrom(biased_hidden_param);
    w_ho_param->set_name("W_ho_h_" + ts);
    w_ho_param->add_param()->set_name("W_ho");
    w_ho_param->add_param()->set_name("b_o");
    w_ho_param->add_bottom("h_" + ts);
    w_ho_param->add_top("W_ho_h_" + ts);

    LayerParameter* o_neuron_param = net_param->add_layer();
    o_neuron_param->CopyFrom(tanh_param);
    o_neuron_param->set_name("o_neuron_" + ts);
    o_neuron_param->add_bottom("W_ho_h_" + ts);
    o_neuron_param->add_top("o_" + ts);

    output_concat_layer.add_bottom("o_" + ts);
  }

  net_param->add_layer()->CopyFrom(output_concat_layer);
}

INSTANTIATE_CLASS(RNNLayer);
REGISTER_LAYER_CLASS(RNN);

}  // namespace caffe
