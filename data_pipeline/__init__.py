"""Raw parallel text -> tokens -> vocabulary -> TFRecords -> bucketed tf.data."""
