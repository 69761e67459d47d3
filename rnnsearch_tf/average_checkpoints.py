"""`rnnsearch average` = `rnnsearch average` (`rnnsearch_tf.cli.average_checkpoints`)."""

from rnnsearch_tf.cli.main import run_command

if __name__ == "__main__":
    run_command("rnnsearch_tf.cli.average_checkpoints")
