"""`python -m rnnsearch_tf.train` = `rnnsearch train` (`rnnsearch_tf.cli.train`)."""

from rnnsearch_tf.cli.main import run_command

if __name__ == "__main__":
    run_command("rnnsearch_tf.cli.train")
