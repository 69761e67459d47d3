"""`python -m rnnsearch_tf.shortlist` = `rnnsearch shortlist` (`rnnsearch_tf.cli.shortlist`)."""

from rnnsearch_tf.cli.main import run_command

if __name__ == "__main__":
    run_command("rnnsearch_tf.cli.shortlist")
