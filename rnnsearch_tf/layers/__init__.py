"""Keras layers of RNNsearch and RNNencdec."""
