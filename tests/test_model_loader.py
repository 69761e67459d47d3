"""load_model_dir: a model directory, or an ensemble of several, read for translation."""

import numpy as np
import pytest
import tensorflow as tf

from rnnsearch_tf.inference.decoding_model import DecodingModel
from rnnsearch_tf.inference.model_loader import check_model_dir, decoding_model, load_model_dir
from rnnsearch_tf.inference.shortlist import Shortlist
from rnnsearch_tf.models.ensemble import Ensemble
from rnnsearch_tf.models.model_dir import ModelDir
from helpers.serving_test_utils import write_model_dir


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model_loader")
    return write_model_dir(folder / "a", seed=3), write_model_dir(folder / "b", seed=4)


def test_one_model_directory(model_dirs):
    loaded = load_model_dir(model_dirs[0])
    assert not isinstance(loaded.model, Ensemble) and loaded.shortlist is None
    assert loaded.checkpoint_path.startswith(str(model_dirs[0]))
    assert loaded.model.config.source_vocab_size == loaded.source_codec.vocabulary.size
    assert loaded.model.config.target_vocab_size == loaded.target_codec.vocabulary.size
    assert (loaded.source_codec.language, loaded.target_codec.language) == ("en", "fr")


def test_an_ensemble_joins_models_and_checkpoint_paths(model_dirs):
    loaded = load_model_dir("+".join(str(path) for path in model_dirs))
    assert isinstance(loaded.model, Ensemble) and len(loaded.model.models) == 2
    first, second = loaded.checkpoint_path.split("+")
    assert first.startswith(str(model_dirs[0])) and second.startswith(str(model_dirs[1]))


def test_the_shortlist_is_read_when_asked_and_named_when_missing(model_dirs, tmp_path):
    other = write_model_dir(tmp_path / "other")
    with pytest.raises(FileNotFoundError, match="shortlist.npz: build it with `rnnsearch shortlist --model_dir="):
        load_model_dir(other, shortlist=True)
    Shortlist([[4]] * 5, [4]).save(ModelDir(other).shortlist_file)
    assert load_model_dir(other, shortlist=True).shortlist.per_source_word == 1


def test_by_default_a_model_directorys_shortlist_is_read_where_it_has_one(model_dirs, tmp_path):
    assert load_model_dir(model_dirs[0]).shortlist is None  # none written: the whole vocabulary
    other = write_model_dir(tmp_path / "other")
    Shortlist([[4]] * 5, [4]).save(ModelDir(other).shortlist_file)
    assert load_model_dir(other).shortlist.per_source_word == 1  # `SearchConfig.shortlist` None
    assert load_model_dir(other, shortlist=False).shortlist is None  # --noshortlist
    assert load_model_dir(f"{other}+{model_dirs[0]}").shortlist is None  # an ensemble: never by default


def test_a_bad_codec_file_is_named_before_weights_load(tmp_path):
    broken = write_model_dir(tmp_path / "broken")
    for checkpoint_file in (broken / "checkpoints").glob("*"):
        checkpoint_file.unlink()
    vocabulary_file = ModelDir(broken).source_vocabulary_file
    with open(vocabulary_file, "w", encoding="utf-8") as stream:
        stream.write("not a vocabulary\n")
    with pytest.raises(ValueError, match=vocabulary_file):
        load_model_dir(broken)


def _values(model):
    """{path below the model: value as float32} of every weight."""
    return {weight.path.split("/", 1)[1]: np.asarray(tf.cast(weight, tf.float32)) for weight in model.weights}


def test_mixed_bfloat16_decodes_with_the_trained_weights_held_in_bf16(model_dirs):
    trained, _ = ModelDir(model_dirs[0]).load_model(precision="mixed_bfloat16")  # float32 weights, cast at every use
    loaded = load_model_dir(model_dirs[0], precision="mixed_bfloat16").model
    assert trained.dtype_policy.name == "mixed_bfloat16" and {w.dtype for w in trained.weights} == {"float32"}
    assert isinstance(loaded, DecodingModel) and loaded.dtype_policy.name == "bfloat16" and not loaded.kept
    assert {variable.dtype for variable in loaded.stored.values()} == {tf.bfloat16}
    assert type(loaded.model) is type(trained) and loaded.config == trained.config  # precision "mixed_bfloat16" still
    assert loaded.model.dtype_policy.name == "mixed_bfloat16"  # the model that read the checkpoint: built once
    rounded = {path: np.asarray(tf.cast(tf.cast(value, tf.bfloat16), tf.float32))
               for path, value in _values(trained).items()}
    stored = {path: np.asarray(tf.cast(value, tf.float32)) for path, value in loaded.stored.items()}
    assert sorted(stored) == sorted(rounded)
    for path, value in stored.items():
        np.testing.assert_array_equal(value, rounded[path], err_msg=path)
    ensemble = load_model_dir("+".join(str(path) for path in model_dirs), precision="mixed_bfloat16").model
    assert [member.dtype_policy.name for member in ensemble.models] == ["bfloat16", "bfloat16"]


def test_int8_holds_the_checkpoints_matrices_in_int8_within_half_a_step(model_dirs):
    trained = _values(ModelDir(model_dirs[0]).load_model()[0])
    loaded = load_model_dir(model_dirs[0], quantize="int8").model
    assert isinstance(loaded, DecodingModel) and (loaded.dtype_policy.name, loaded.quantize) == ("float32", "int8")
    matrices = {path for path, value in trained.items() if value.ndim == 2}
    assert set(loaded.stored) == matrices and set(loaded.kept) == set(trained) - matrices
    for path in matrices:
        widened = loaded.stored[path].numpy().astype(np.float32) * loaded.scales[path].numpy()
        assert np.all(np.abs(widened - trained[path]) <= loaded.scales[path].numpy() / 2 + 1e-7), path
    both = load_model_dir(model_dirs[0], precision="mixed_bfloat16", quantize="int8").model
    assert (both.dtype_policy.name, both.quantize) == ("bfloat16", "int8")
    assert {variable.dtype for variable in both.stored.values()} == {tf.int8, tf.bfloat16}  # the vectors in bf16
    ensemble = load_model_dir("+".join(str(path) for path in model_dirs), quantize="int8").model
    assert [member.quantize for member in ensemble.models] == ["int8", "int8"]


def test_an_unknown_quantization_is_named_before_weights_load(tmp_path):
    broken = write_model_dir(tmp_path / "broken")
    for checkpoint_file in (broken / "checkpoints").glob("*"):
        checkpoint_file.unlink()
    with pytest.raises(ValueError, match=r"quantize must be one of \('none', 'int8'\), got 'int4'"):
        load_model_dir(broken, quantize="int4")


def test_float32_decodes_with_the_model_that_read_the_checkpoint(model_dirs):
    trained, _ = ModelDir(model_dirs[0]).load_model()
    assert decoding_model(trained) is trained
    loaded = load_model_dir(model_dirs[0]).model
    assert loaded.dtype_policy.name == "float32" and {w.dtype for w in loaded.weights} == {"float32"}
    expected = _values(trained)
    assert sorted(_values(loaded)) == sorted(expected)
    for path, value in _values(loaded).items():
        np.testing.assert_array_equal(value, expected[path], err_msg=path)



def test_an_ensemble_takes_one_checkpoint_per_model_or_refuses_one_models_path(model_dirs):
    paths = [ModelDir(path).checkpoint_path("latest") for path in model_dirs]
    joined = "+".join(str(path) for path in model_dirs)
    assert load_model_dir(joined, "+".join(paths)).checkpoint_path == "+".join(paths)
    with pytest.raises(ValueError, match=rf"^checkpoint {paths[0]} is one model's: an ensemble of 2 models takes one"):
        load_model_dir(joined, paths[0])  # it had read the first model's weights into both members
    with pytest.raises(ValueError, match=r"3 checkpoints joined by '\+' for 2 models"):
        load_model_dir(joined, "+".join([*paths, paths[0]]))


def test_a_checkpoint_of_another_model_is_named_with_the_model_it_does_not_fit(model_dirs, tmp_path):
    other = write_model_dir(tmp_path / "other", model_name="rnnencdec")
    foreign = ModelDir(other).checkpoint_path("latest")
    with pytest.raises(ValueError, match=rf"^{foreign} does not hold the weights of {model_dirs[0]}/model.json's"):
        load_model_dir(model_dirs[0], foreign)


def test_check_model_dir_names_a_mistake_of_any_member_before_weights_load(model_dirs, tmp_path):
    joined = "+".join(str(path) for path in model_dirs)
    directories, codecs, paths = check_model_dir(joined)
    assert [directory.path for directory in directories] == [str(path) for path in model_dirs]
    assert paths == [ModelDir(path).checkpoint_path("best") for path in model_dirs]
    assert [codec.language for codec in codecs] == ["en", "fr"]
    with pytest.raises(FileNotFoundError, match=rf"no checkpoint in {model_dirs[0]}/averaged"):
        check_model_dir(joined, "averaged")
    with pytest.raises(ValueError, match="int4"):
        check_model_dir(model_dirs[0], quantize="int4")
