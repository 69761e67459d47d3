"""`python -m rnnsearch_tf.translate` = `rnnsearch translate` (`rnnsearch_tf.cli.translate`)."""

from rnnsearch_tf.cli.main import run_command

if __name__ == "__main__":
    run_command("rnnsearch_tf.cli.translate")
