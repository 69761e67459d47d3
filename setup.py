"""rnnsearch-tf: RNNsearch (Bahdanau et al. 2014) and RNN Encoder-Decoder (Cho et al. 2014) in TF/Keras."""

import setuptools

setuptools.setup(
    name="rnnsearch-tf",
    version="0.1.0",
    description="Neural machine translation by jointly learning to align and translate, in TensorFlow/Keras",
    python_requires=">=3.10,<3.14",
    packages=setuptools.find_packages(include=["rnnsearch_tf*", "data_pipeline*", "serving*"]),
    package_data={"serving": ["static/*"]},  # the translation page of `rnnsearch serve` (serving/page.py)
    install_requires=[
        "tensorflow==2.21.*",
        "tensorflow-text==2.21.*",  # must match TensorFlow's minor version
        "keras>=3.10,<4",
        "tensorboard==2.21.*",
        "tensorflow-serving-api==2.21.*",
        "grpcio>=1.60",
        "waitress>=3.0,<4",  # the REST port of serving/local_server.py
        "prometheus_client>=0.20",  # the metrics of `rnnsearch serve --monitoring_config_file` (serving/metrics.py)
        "absl-py>=2.1",
        "sacrebleu>=2.4,<3",
        "matplotlib>=3.8",
        "numpy>=1.26",
        "regex>=2023.0",  # the sentence splitter's Unicode properties (also a dependency of sacrebleu)
        "sentencepiece>=0.2,<0.3",  # learns the subword models of `build-data --subwords=sentencepiece`
        "nltk>=3.8,<4",  # the language models of `rnnsearch select-data` (data_pipeline/data_selection.py)
        "sacremoses==0.2.0",  # Moses' per-language prefixes and rules, read by data_pipeline/moses_tokenizer.py
        "pycountry>=22.3",  # the ISO 639 table every language code is checked against (data_pipeline/languages.py)
    ],
    entry_points={"console_scripts": ["rnnsearch = rnnsearch_tf.cli.main:main"]},
    extras_require={
        # sacreBLEU's tokenizers for Japanese and Korean targets (MeCab and its dictionaries), for `evaluate`.
        "ja": ["sacrebleu[ja]>=2.4,<3"],
        "ko": ["sacrebleu[ko]>=2.4,<3"],
        # import-linter keeps the packages layered (tests/test_architecture.py); pytest-xdist runs test files on
        # every core; selenium drives headless Chromium through the translation page (tests/test_page.py); the
        # ja and ko tokenizers are tested with a Japanese and a Korean target (tests/test_corpus_scores.py).
        "test": ["pytest>=8", "pytest-xdist>=3.8", "import-linter>=2.1", "selenium>=4.20", "sacrebleu[ja,ko]>=2.4,<3"],
    },
)
