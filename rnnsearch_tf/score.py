"""`python -m rnnsearch_tf.score` = `rnnsearch score` (`rnnsearch_tf.cli.score`)."""

from rnnsearch_tf.cli.main import run_command

if __name__ == "__main__":
    run_command("rnnsearch_tf.cli.score")
