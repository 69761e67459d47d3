#!/usr/bin/env bash
# From a fresh clone to a trained, exported and served RNNsearch, in one command (about 12 minutes on
# 2 idle CPU cores, 8 of them training): installs into .venv, builds Multi30k En->Fr, trains
# configs/quickstart.flags, exports a SavedModel (the newest 3 versions are kept), serves it with the
# local TF-Serving-compatible server, translates sentences over gRPC, prints their attention alignments
# and the test BLEU, and says how to serve the translation page.
#
# Settings (environment): RNNSEARCH_DATA (corpora; default ../shared/data beside the checkout),
# QUICKSTART_DIR (outputs; default work_dirs), QUICKSTART_TRAIN_STEPS (train that many updates however
# long they take, instead of the flagfile's 8 minutes),
# QUICKSTART_PORT (gRPC port of the local server; default: a free port), PYTHON (the interpreter that creates
# .venv; default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${QUICKSTART_DIR:-work_dirs}
export RNNSEARCH_DATA=${RNNSEARCH_DATA:-$(cd .. && pwd)/shared/data}
STEP="starting"
trap 'echo; echo "quickstart failed during: $STEP"; echo "$HINT"' ERR
say() { STEP=$1; HINT=$2; echo; echo "==> $1"; }
# Removes all but the newest $2 versions (folders named by integers) of the export base path $1, spaces and all.
keep_newest() {
  local versions=() i
  mapfile -t versions < <(ls -d "$1"/[0-9]* | grep -E '/[0-9]+$' | sort -V)
  for ((i = 0; i + $2 < ${#versions[@]}; i++)); do rm -rf -- "${versions[i]}"; done
}

say "1/7 installing rnnsearch-tf into .venv" \
    "Check that python3 (3.10-3.13) with venv is installed and that pip can reach the package index. A .venv of another Python (.venv/bin/python --version) is kept: remove it (rm -rf .venv) and run again with PYTHON=python3.11 (any of 3.10-3.13)."
[ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
PY=$ROOT/.venv/bin/python
RNNSEARCH=$ROOT/.venv/bin/rnnsearch

say "2/7 building Multi30k En-Fr into $OUT/data/multi30k" \
    "A corpus file build-data names as missing is Multi30k task 1's, expected in \$RNNSEARCH_DATA/multi30k/ (from https://github.com/multi30k/dataset, data/task1/raw): set RNNSEARCH_DATA to the folder holding multi30k/ and run again."
if [ ! -e "$OUT/data/multi30k/metadata.json" ]; then
  "$RNNSEARCH" build-data --flagfile=configs/data/multi30k.flags --output_dir="$OUT/data/multi30k"
else
  echo "already built ($OUT/data/multi30k/metadata.json)"
fi

MODEL_DIR=$OUT/quickstart
say "3/7 training configs/quickstart.flags into $MODEL_DIR (TensorBoard: .venv/bin/tensorboard --logdir $MODEL_DIR)" \
    "The full training log is $OUT/train.log (each run appended under a header). Training resumes from its last checkpoint when you run the quickstart again."
mkdir -p "$OUT"
echo "==== quickstart run $(date -u +%Y-%m-%dT%H:%M:%SZ) ====" >> "$OUT/train.log"
LOG_START=$(($(wc -c < "$OUT/train.log") + 1))
"$RNNSEARCH" train --flagfile=configs/quickstart.flags --data_dir="$OUT/data/multi30k" \
    --model_dir="$MODEL_DIR" ${QUICKSTART_TRAIN_STEPS:+--train_steps=$QUICKSTART_TRAIN_STEPS --max_hours=10000} >> "$OUT/train.log" 2>&1 &
TRAIN_PID=$!
# The console: progress, validations, what a signal does and the trainer's `error:` lines. In the background, as the
# training, where the shell makes both ignore SIGINT: Ctrl-C sends the training SIGTERM, and it saves a checkpoint
# after its running update (abandoning a running validation) and stops, which the console shows; a second Ctrl-C
# stops it at once.
tail -c +$LOG_START -f --pid=$TRAIN_PID "$OUT/train.log" | grep --line-buffered -E \
  "step [0-9]+ \||validation at|SIG(INT|TERM): training stops|Training stopped|^error: |Traceback|[A-Za-z]+Error:" &
CONSOLE_PID=$!
trap 'kill -TERM $TRAIN_PID 2>/dev/null' INT TERM
TRAIN_STATUS=0
wait $TRAIN_PID || TRAIN_STATUS=$?
while kill -0 $TRAIN_PID 2>/dev/null; do  # a signal ends `wait` early: wait for the checkpoint
  TRAIN_STATUS=0
  wait $TRAIN_PID || TRAIN_STATUS=$?
done
trap - INT TERM
wait $CONSOLE_PID || true  # its last lines
if [ $TRAIN_STATUS -eq 130 ] || [ $TRAIN_STATUS -eq 143 ]; then
  # Stopped by a signal: with the checkpoint its summary names (the last thing it prints), or at once without one.
  SAVED=$("$PY" - "$OUT/train.log" "$LOG_START" <<'SUMMARY'
import json, sys
with open(sys.argv[1], "rb") as log:
    log.seek(int(sys.argv[2]) - 1)
    text = log.read().decode("utf-8", "replace")
start = text.rfind("\n{\n") + 1
try:
    summary = json.loads(text[start:text.index("\n}\n", start) + 2]) if start else {}
except ValueError:
    summary = {}
print((summary.get("latest_checkpoint") or "") if summary.get("signal") else "")
SUMMARY
  )
  if [ -n "$SAVED" ]; then
    echo "training stopped with a checkpoint of its last update, $SAVED; run the quickstart again to resume it"
  else
    NEWEST=$(ls "$MODEL_DIR"/checkpoints/ckpt-*.index 2> /dev/null | sort -V | tail -n 1 || true)  # none: ls fails
    AGAIN="starts it afresh"
    [ -z "$NEWEST" ] || AGAIN="resumes from its newest checkpoint, ${NEWEST%.index}"
    echo "training stopped at once, without a checkpoint of its last updates; running the quickstart again $AGAIN"
  fi
  exit 130
fi
if [ $TRAIN_STATUS -ne 0 ] && tail -c +$LOG_START "$OUT/train.log" | grep "^error: " > /dev/null; then
  HINT="The trainer stopped for the reason its error line above gives: running the quickstart again fails the same"
  HINT+=" way until that is fixed. The full training log is $OUT/train.log."
fi
[ $TRAIN_STATUS -eq 0 ]

EXPORT_DIR=$OUT/exports/rnnsearch
say "4/7 building the vocabulary shortlist and exporting a SavedModel to $EXPORT_DIR" \
    "The export log is $OUT/export.log; the model directory is $MODEL_DIR."
"$RNNSEARCH" shortlist --model_dir="$MODEL_DIR"  # translate and export decode over it (docs/translating.md)
"$RNNSEARCH" export --model_dir="$MODEL_DIR" --export_dir="$EXPORT_DIR" --beam_size=5 > "$OUT/export.log" 2>&1
echo "exported: $(ls -d "$EXPORT_DIR"/[0-9]* | sort -V | tail -n 1)"
keep_newest "$EXPORT_DIR" 3

PORT=${QUICKSTART_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
say "5/7 serving $EXPORT_DIR on 127.0.0.1:$PORT (gRPC, the TensorFlow Serving API)" \
    "Is port $PORT free? Set QUICKSTART_PORT to another port."
"$RNNSEARCH" serve --model_base_path="$EXPORT_DIR" --model_name=rnnsearch --port="$PORT" \
    > "$OUT/local_server.log" 2>&1 &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null || true' EXIT
READY_BY=$((SECONDS + 300))  # the server is ready when its gRPC port answers; a server that ended is not waited for
until "$PY" -c "import grpc; grpc.channel_ready_future(grpc.insecure_channel('127.0.0.1:$PORT')).result(timeout=2)" \
    2> /dev/null; do
  if ! kill -0 "$SERVER_PID" 2> /dev/null || [ "$SECONDS" -ge "$READY_BY" ]; then
    tail -n 3 "$OUT/local_server.log" >&2
    false
  fi
done

SENTENCES=$OUT/quickstart_sentences.en
printf '%s\n' "A man is riding a bicycle down the street." "Two dogs are playing in the snow." \
    "A little girl in a red dress is smiling." > "$SENTENCES"
say "6/7 translating through the gRPC client, with alignments" "The server log is $OUT/local_server.log."
"$RNNSEARCH" client --server="127.0.0.1:$PORT" --model_name=rnnsearch --input_file="$SENTENCES" --with_scores
echo
echo "Attention: each target word and the source word it attends to most (weight α)"
"$RNNSEARCH" translate --model_dir="$MODEL_DIR" --input="$SENTENCES" --output_format=alignment \
    --beam_size=5 --noprogress 2>/dev/null | "$PY" -c '
import json, sys
for line in sys.stdin:
    record = json.loads(line)
    source = record["source_tokens"] + ["</s>"]
    print(" ".join(record["source_tokens"]), "->", record["translation"])
    for word, weights in zip(record["target_tokens"], record["alignment"]):
        best = max(range(len(weights)), key=weights.__getitem__)
        print(f"    {word:>16} <- {source[best]:<16} {weights[best]:.2f}")
'

say "7/7 test BLEU on Multi30k test_2016_flickr" "See the error above."
# Over the whole vocabulary, as the paper's tables and the README's row (the shortlist moves BLEU by up to 0.6 here).
"$RNNSEARCH" evaluate --model_dir="$MODEL_DIR" --noshortlist \
    --source="$OUT/data/multi30k/test.source.txt" --reference="$OUT/data/multi30k/test.target.txt" \
    --output_dir="$MODEL_DIR/eval_test2016" --beam_size=5 | tail -n 5
"$PY" - "$MODEL_DIR/eval_test2016/metrics.json" bench/results/quickstart.json <<'COMPARE'
import json, sys
ours = next(iter(json.load(open(sys.argv[1]))["models"].values()))
record = json.load(open(sys.argv[2]))
readme = next(iter(record["models"].values()))
training = ours["training"]  # evaluate read the best checkpoint by dev BLEU, which may be before the last step
print(f"this run: test_2016 BLEU {ours['bleu']:.2f} after {training.get('best_step', training['step'])} updates "
      f"(its best checkpoint; {training['step']} in all)")
print(f"README row: {readme['test_2016']['bleu']:.2f} after {readme['updates']} updates ({sys.argv[2]}, "
      f"{record['date']}, {record['cpu']['model']}); training stops after 8 minutes, so a slower machine "
      "does fewer updates")
COMPARE
echo
echo "Done. Report: $MODEL_DIR/eval_test2016/report.md"
echo "TensorBoard: .venv/bin/tensorboard --logdir $MODEL_DIR"
echo "Translation page: .venv/bin/rnnsearch serve --model_base_path=$EXPORT_DIR --rest_api_port=8501"
echo "                  then open http://127.0.0.1:8501/ (translations, n-best lists, attention heatmaps)"
