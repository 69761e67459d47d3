"""SavedModel export and TensorFlow Serving client (see docs/serving.md)."""
