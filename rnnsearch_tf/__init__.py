"""rnnsearch-tf: RNNsearch (Bahdanau et al. 2014) and RNNencdec (Cho et al. 2014) in TensorFlow/Keras."""
