// Legend as in lstm_layer.hpp. The unrolled net is BVLC's, layer for layer and name for name, so
// that BVLC's .caffemodel weights and setup logs carry over:
//   x_transform      W_xc_x = W_xc x + b_c, all timesteps at once        (params W_xc, b_c)
//   W_xc_x_static    W_xc_static x_static, reshaped to (1, N, 4H)        (param W_xc_static)
//   per timestep t:  h_conted_{t-1} = cont_t h_{t-1}                     (Scale)
//                    W_hc_h_{t-1} = W_hc h_conted_{t-1}                  (param W_hc, shared)
//                    gate_input_t = W_hc_h_{t-1} + W_xc_x_t (+ static)   (Eltwise SUM)
//                    c_t, h_t = LSTMUnit(c_{t-1}, gate_input_t, cont_t)
//   c_T (a Split copy of the last cell state) and h = concat(h_1 .. h_T).
#include "caffe/layers/lstm_layer.hpp"

#include <string>
#include <vector>

namespace caffe {

template <typename Dtype>
void LSTMLayer<Dtype>::RecurrentInputBlobNames(vector<string>* names) const {
  *names = {"h_0", "c_0"};
}

template <typename Dtype>
void LSTMLayer<Dtype>::RecurrentOutputBlobNames(vector<string>* names) const {
  *names = {"h_" + std::to_string(this->num_timesteps_), "c_T"};
}

template <typename Dtype>
void LSTMLayer<Dtype>::RecurrentInputShapes(vector<BlobShape>* shapes) const {
  const int num_output = static_cast<int>(this->layer_param_.recurrent_param().num_output());
  shapes->assign(2, BlobShape());
  for (BlobShape& shape : *shapes) {
    shape.add_dim(1);  // one timestep
    shape.add_dim(this->num_streams_);
    shape.add_dim(num_output);
  }
}

template <typename Dtype>
void LSTMLayer<Dtype>::OutputBlobNames(vector<string>* names) const {
  *names = {"h"};
}

template <typename Dtype>
void LSTMLayer<Dtype>::FillUnrolledNet(NetParameter* net_param) const {
  const RecurrentParameter& recurrent_param = this->layer_param_.recurrent_param();
  const int num_output = static_cast<int>(recurrent_param.num_output());
  LAYER_CHECK_GE(num_output, 1) << "recurrent_param.num_output is 0; must be >= 1";
  const int gate_dim = 4 * num_output;

  // Templates of the layer kinds used below.
  LayerParameter hidden_param;  // W * input along axis 2, no bias
  hidden_param.set_type("InnerProduct");
  InnerProductParameter* hidden_ip = hidden_param.mutable_inner_product_param();
  hidden_ip->set_num_output(gate_dim);
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
  LayerParameter scale_param;  // multiplies by cont over the (timestep, stream) axes
  scale_param.set_type("Scale");
  scale_param.mutable_scale_param()->set_axis(0);

  vector<BlobShape> input_shapes;
  RecurrentInputShapes(&input_shapes);
  LayerParameter* input_layer_param = net_param->add_layer();
  input_layer_param->set_type("Input");
  input_layer_param->add_top("c_0");
  input_layer_param->mutable_input_param()->add_shape()->CopyFrom(input_shapes[1]);
  input_layer_param->add_top("h_0");
  input_layer_param->mutable_input_param()->add_shape()->CopyFrom(input_shapes[0]);

  LayerParameter* cont_slice_param = nullptr;
  LayerParameter* x_slice_param = nullptr;
  this->AddInputTransform("c", gate_dim, hidden_param, biased_hidden_param, net_param,
                          &cont_slice_param, &x_slice_param);

  LayerParameter output_concat_layer;
  output_concat_layer.set_name("h_concat");
  output_concat_layer.set_type("Concat");
  output_concat_layer.add_top("h");
  output_concat_layer.mutable_concat_param()->set_axis(0);

  for (int t = 1; t <= this->num_timesteps_; ++t) {
    const string tm1s = std::to_string(t - 1);
    const string ts = std::to_string(t);
    cont_slice_param->add_top("cont_" + ts);
    x_slice_param->add_top("W_xc_x_" + ts);

    // A sequence starting at t (cont_t = 0) sees h_{t-1} = 0.
    LayerParameter* cont_h_param = net_param->add_layer();
    cont_h_param->CopyFrom(scale_param);
    cont_h_param->set_name("h_conted_" + tm1s);
    cont_h_param->add_bottom("h_" + tm1s);
    cont_h_param->add_bottom("cont_" + ts);
    cont_h_param->add_top("h_conted_" + tm1s);

    LayerParameter* w_param = net_param->add_layer();
    w_param->CopyFrom(hidden_param);
    w_param->set_name("transform_" + ts);
    w_param->add_param()->set_name("W_hc");
    w_param->add_bottom("h_conted_" + tm1s);
    w_param->add_top("W_hc_h_" + tm1s);

    LayerParameter* input_sum_layer = net_param->add_layer();
    input_sum_layer->CopyFrom(sum_param);
    input_sum_layer->set_name("gate_input_" + ts);
    input_sum_layer->add_bottom("W_hc_h_" + tm1s);
    input_sum_layer->add_bottom("W_xc_x_" + ts);
    if (this->static_input_) input_sum_layer->add_bottom("W_xc_x_static");
    input_sum_layer->add_top("gate_input_" + ts);

    LayerParameter* lstm_unit_param = net_param->add_layer();
    lstm_unit_param->set_type("LSTMUnit");
    lstm_unit_param->add_bottom("c_" + tm1s);
    lstm_unit_param->add_bottom("gate_input_" + ts);
    lstm_unit_param->add_bottom("cont_" + ts);
    lstm_unit_param->add_top("c_" + ts);
    lstm_unit_param->add_top("h_" + ts);
    lstm_unit_param->set_name("unit_" + ts);

    output_concat_layer.add_bottom("h_" + ts);
  }

  // c_T: the last cell state under a fixed name (BVLC leaves this Split layer unnamed).
  LayerParameter* c_T_copy_param = net_param->add_layer();
  c_T_copy_param->set_type("Split");
  c_T_copy_param->add_bottom("c_" + std::to_string(this->num_timesteps_));
  c_T_copy_param->add_top("c_T");

  net_param->add_layer()->CopyFrom(output_concat_layer);
}

INSTANTIATE_CLASS(LSTMLayer);
REGISTER_LAYER_CLASS(LSTM);

}  // namespace caffe
