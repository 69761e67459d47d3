"""`python -m rnnsearch_tf.evaluate` = `rnnsearch evaluate` (`rnnsearch_tf.cli.evaluate`)."""

from rnnsearch_tf.cli.main import run_command

if __name__ == "__main__":
    run_command("rnnsearch_tf.cli.evaluate")
