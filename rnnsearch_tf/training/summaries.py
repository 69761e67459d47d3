"""What training shows in TensorBoard: the run's settings, skipped updates, validations, embeddings."""

import os

import tensorflow as tf
from tensorboard.plugins import projector
from tensorboard.plugins.hparams import api as hparams_api

from data_pipeline.vocabulary import Vocabulary


class TrainingSummaries:
    """The TensorBoard event files of a model directory: the settings in the directory itself, `train/` and `dev/`.

    The model directory's own event file holds the settings as an HParams session: TensorBoard takes a
    session's metrics from the scalars of its run and of the runs below it, so every scalar of `train/`
    and `dev/` (dev BLEU, chrF, NLL per sentence; train loss) is a metric of the session (group "train"
    or "dev") where TensorBoard reads a folder of model directories (at one model directory, whose session
    is the run ".", TensorBoard 2.21 looks for the metrics in "./dev", no run, and lists none). `train/`
    holds the update statistics (`TrainingStatistics` writes them through `train`), the count of non-finite
    updates in a row, and the two embedding matrices with their vocabularies for the projector (Cho et al.
    2014, Figure 4). `dev/` holds each validation: NLL per sentence (the tag of train's, so that TensorBoard
    draws the two in one chart), `dev/bleu`, `dev/chrf`, the attention matrices as images (Bahdanau et al.
    2014, Figure 3) and sample translations as a table.

    Only the chief of a multi-worker run writes; the other workers' summaries go to no-op writers.

    Args:
        model_dir: the `ModelDir` (its vocabulary copies name the projector's rows).
        model: the `EncoderDecoderModel` being trained (its embeddings go to the projector).
        is_chief: whether this worker writes.
    """

    def __init__(self, model_dir, model, is_chief=True):
        self.model_dir = model_dir
        self.model = model
        self.is_chief = is_chief
        self.train, self.dev = (
            tf.summary.create_file_writer(model_dir.tensorboard_dir(name)) if is_chief
            else tf.summary.create_noop_writer()
            for name in ("train", "dev")
        )

    def write_hparams(self, hparams):
        """The run's settings (`{"model/hidden_dim": 1000, ...}`), once, when a run starts afresh: TensorBoard
        shows a session's first settings, so a resumed run's would not show."""
        if not self.is_chief:
            return
        writer = tf.summary.create_file_writer(self.model_dir.path)
        with writer.as_default():
            hparams_api.hparams(hparams)
        writer.close()

    def write_nonfinite_updates(self, step, in_a_row):
        """How many updates in a row were skipped for a non-finite loss or gradient."""
        with self.train.as_default():
            tf.summary.scalar("nonfinite_updates_in_a_row", in_a_row, step=step)

    def write_validation(self, step, result):
        """Dev scalars, attention images, sample translations (a `Validator` result), then the embeddings."""
        with self.dev.as_default():
            tf.summary.scalar("nll_per_sentence", result["nll_per_sentence"], step=step)  # train's tag
            tf.summary.scalar("dev/bleu", result["bleu"], step=step)
            tf.summary.scalar("dev/chrf", result["chrf"], step=step)
            for index, png in enumerate(result["attention_images"]):
                tf.summary.image(f"attention/{index}", tf.image.decode_png(png)[tf.newaxis], step=step)
            if result["samples"]:
                tf.summary.text("translations", markdown_table(result["samples"]), step=step)
        self.dev.flush()
        if self.is_chief:
            self._write_projector(step)

    def flush(self):
        for writer in (self.train, self.dev):
            writer.flush()

    def _write_projector(self, step):
        """Both embedding matrices with their vocabularies, for TensorBoard's projector."""
        logdir = self.model_dir.tensorboard_dir("train")
        embeddings = {
            "source_embedding": (self.model.encoder.source_embedding.embeddings,
                                 self.model_dir.source_vocabulary_file),
            "target_embedding": (self.model.decoder.target_embedding.embeddings,
                                 self.model_dir.target_vocabulary_file),
        }
        projector_config = projector.ProjectorConfig()
        for name, (variable, vocabulary_file) in embeddings.items():
            metadata_file = f"{name}_tokens.tsv"
            if not os.path.exists(os.path.join(logdir, metadata_file)):
                with open(os.path.join(logdir, metadata_file), "w", encoding="utf-8") as target:
                    target.writelines(token + "\n" for token, _ in Vocabulary.read_entries(vocabulary_file))
            embedding = projector_config.embeddings.add()
            embedding.tensor_name = f"{name}/.ATTRIBUTES/VARIABLE_VALUE"
            embedding.metadata_path = metadata_file
        snapshot = tf.train.Checkpoint(**{name: variable.value for name, (variable, _) in embeddings.items()})
        tf.train.CheckpointManager(snapshot, logdir, 1, checkpoint_name="embeddings").save(checkpoint_number=step)
        projector.visualize_embeddings(logdir, projector_config)


def markdown_table(samples):
    """(source, reference, translation) triples as a Markdown table (TensorBoard's text plugin renders it)."""
    rows = ["| source | reference | translation |", "|---|---|---|"]
    rows += ["| " + " | ".join(text.replace("|", "\\|") for text in sample) + " |" for sample in samples]
    return "\n".join(rows)
