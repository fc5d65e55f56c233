#!/bin/bash
# Whole-process rounds against bwa: per round and set, `bwa aln` + `bwa samse`, then
# `seqsift search -t 1` from an older checkout (OLD_SRC, e.g. a `git worktree` at /tmp/old/src)
# and from this one, in alternating order, outputs compared. Before the two searches the round
# reads their input back into the page cache and runs a one-read search of each: bwa's files
# push ours out of this machine's small page cache, which otherwise slows whichever runs first.
#
#   OLD_SRC=/tmp/old/src ROUNDS=5 SETS="near exact big" bash benchmarks/rounds_fmindex.sh
set -euo pipefail
cd "$(dirname "$0")/.."
D=bench-data/fm
PY=.venv/bin/python
head -4 $D/reads_exact_1000000.fq > $D/one_read.fq
$PY -m compileall -q src "$OLD_SRC" > /dev/null  # PYTHONDONTWRITEBYTECODE would recompile edited modules every run
seconds() { local a=$(date +%s.%N); "$@"; local b=$(date +%s.%N); python3 -c "print($b - $a)"; }
for r in $(seq 1 "${ROUNDS:-5}"); do
  for set in ${SETS:-near exact}; do
    case $set in
      exact) R=$D/reads_exact_1000000.fq; B=$D/klebsiella.bwa; S=$D/klebsiella.ssx;;
      near) R=$D/reads_near_miss_1000000.fq; B=$D/klebsiella.bwa; S=$D/klebsiella.ssx;;
      big) R=$D/reads_exact_22_bp_1000000.fq; B=$D/klebsiella_x4.bwa; S=$D/klebsiella_x4.ssx;;
    esac
    bwa_s=$(seconds sh -c "bwa aln -n 0 -o 0 -l 100 -k 0 -t 1 $B $R > $D/r.sai 2>/dev/null && bwa samse $B $D/r.sai $R > $D/r.sam 2>/dev/null")
    sync; cat $R $S > /dev/null
    PYTHONPATH=$OLD_SRC $PY -m seqsift search -t 1 -q $S $D/one_read.fq -o /dev/null || true
    $PY -m seqsift search -t 1 -q $S $D/one_read.fq -o /dev/null || true
    old() { PYTHONPATH=$OLD_SRC $PY -m seqsift search -t 1 -q $S $R -o $D/old.tsv || [ $? = 1 ]; }
    new() { $PY -m seqsift search -t 1 -q $S $R -o $D/new.tsv || [ $? = 1 ]; }
    if [ $((r % 2)) = 1 ]; then old_s=$(seconds old); sync; new_s=$(seconds new); else new_s=$(seconds new); sync; old_s=$(seconds old); fi
    cmp -s $D/old.tsv $D/new.tsv || echo "outputs differ: $set"
    python3 -c "b, o, n = $bwa_s, $old_s, $new_s; print(f'$set round $r: bwa {b:.2f} old {o:.2f} new {n:.2f}  bwa/old {b/o:.1f} bwa/new {b/n:.1f} old/new {o/n:.2f}')"
  done
done
