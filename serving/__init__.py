"""SavedModel export and TensorFlow Serving client (see README)."""
